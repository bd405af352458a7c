"""The read-only shell's two layers (v3, v4): the parser, then the operating system.

Every test runs in both modes: under a real bubblewrap sandbox ("sandbox", skipped with the reason
where bwrap is missing or cannot start) and with the parser alone ("parsing only": a bwrap that
cannot start). What must hold in both: a hostile repository's git settings run no program and write
nothing, sort cannot pick its temp folder, every command has a memory limit, and the API key is
not in a command's environment. What only the sandbox adds: reads stay in the work folder, no
network, nothing writable, and no process outlives its command.
"""

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from plumbing.sandbox import sandbox_argv
from tests.agents import (
    ROOT,
    SCRIPTS,
    git_repository_with_one_commit,
    once,
    run_in_process,
)
from tests.test_subagents import files, read_only_result

def bwrap_problem() -> str | None:
    """Why no bubblewrap sandbox can run here, or None."""
    if sys.platform != "linux":
        return f"bubblewrap is Linux's sandbox; this is {sys.platform}"
    if not shutil.which("bwrap"):
        return "bubblewrap (bwrap) is not installed; .ci/run installs it on Debian"
    probe = subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    return f"bwrap cannot start here: {probe.stderr.strip()}" if probe.returncode else None


@pytest.fixture(params=["sandbox", "parsing only"])
def mode(request, monkeypatch, tmp_path_factory) -> str:
    """"parsing only": a bwrap and a sandbox-exec that cannot start come first on the PATH, as
    where user namespaces are off; the commands keep the rest of the user's PATH."""
    if request.param == "sandbox" and (problem := bwrap_problem()):
        pytest.skip(problem)
    if request.param == "parsing only":
        failing = tmp_path_factory.mktemp("sandboxes-that-cannot-start")
        for name in ("bwrap", "sandbox-exec"):
            (failing / name).write_text("#!/bin/sh\nexit 1\n")
            (failing / name).chmod(0o755)
        monkeypatch.setenv("PATH", f"{failing}{os.pathsep}{os.environ['PATH']}")
    return request.param


@pytest.fixture
def sandboxed() -> None:
    if problem := bwrap_problem():
        pytest.skip(problem)


@pytest.fixture
def hostile_repo(tmp_path, tmp_path_factory):
    """A git repository in the work folder whose .git/config and .gitattributes make read-only git
    commands run programs; each would leave a file in `marks`, a folder outside the work folder."""
    marks = tmp_path_factory.mktemp("marks")
    git_repository_with_one_commit(tmp_path)
    sign_head_falsely(tmp_path)  # so that showing or checking the signature runs gpg.program
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    (tmp_path / ".gitattributes").write_text("*.txt diff=shown\n")
    for key, name in [
        ("core.fsmonitor", "fsmonitor"),
        ("diff.external", "external-diff"),
        ("diff.shown.textconv", "textconv"),
    ]:
        subprocess.run(
            ["git", "config", key, f"touch {marks / name}; cat"], cwd=tmp_path, check=True
        )
    gpg = tmp_path_factory.mktemp("programs") / "gpg"  # git runs gpg.program without a shell
    gpg.write_text(f"#!/bin/sh\ntouch {marks / 'gpg'}\n")
    gpg.chmod(0o755)
    subprocess.run(["git", "config", "gpg.program", str(gpg)], cwd=tmp_path, check=True)
    os.utime(tmp_path / "a.txt", (1, 1))  # a changed timestamp: git would refresh .git/index for it
    return marks


@once("v3")
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize(
    "command",
    [
        "git diff",
        "git status",
        "git log -p --format=%G?%s",
        "git show --show-signature",
        "git log --show-signature",
        "git log -p --textconv",
    ],
)
def test_a_hostile_repository_runs_no_program_and_writes_nothing(
    scripted_api, agent, hostile_repo, mode, tmp_path, command
):
    before = files(tmp_path)
    result = read_only_result(scripted_api, agent, command)
    assert result["content"].endswith("[exit code 0]"), result["content"]
    assert list(hostile_repo.iterdir()) == []
    assert files(tmp_path) == before  # .git/index included


def sign_head_falsely(folder) -> None:
    """Give HEAD a PGP signature header (not a valid one: git must still call gpg to know)."""
    commit = subprocess.run(
        ["git", "cat-file", "commit", "HEAD"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    header, message = commit.split("\n\n", 1)
    signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAAB\n -----END PGP SIGNATURE-----"
    signed = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=folder,
        text=True,
        input=f"{header}\n{signature}\n\n{message}",
        capture_output=True,
        check=True,
    ).stdout.strip()
    subprocess.run(["git", "update-ref", "HEAD", signed], cwd=folder, check=True)


@pytest.fixture
def partial_clone(tmp_path, tmp_path_factory) -> None:
    """The work folder is a clone without file contents (--filter=blob:none) of a repository
    outside it: showing a file makes git fetch the contents from there, unless it may not."""
    origin = tmp_path_factory.mktemp("origin")
    git_repository_with_one_commit(origin)
    subprocess.run(["git", "config", "uploadpack.allowFilter", "true"], cwd=origin, check=True)
    subprocess.run(
        ["git", "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{origin}", "."],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    # as an untrusted repository may: allow the file protocol, which git allows by default only
    # to commands a user types, not to a fetch git starts by itself
    subprocess.run(["git", "config", "protocol.file.allow", "always"], cwd=tmp_path, check=True)


@once("v3")
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_partial_clone_fetches_nothing(scripted_api, agent, partial_clone, mode, tmp_path):
    before = files(tmp_path)
    result = read_only_result(scripted_api, agent, "git show HEAD:a.txt")
    assert not result["content"].endswith("[exit code 0]"), result["content"]
    assert files(tmp_path) == before  # no pack fetched into .git/objects


@pytest.fixture
def touched_repo(tmp_path) -> None:
    """A clean repository whose one file got a new timestamp: git diff and git status would
    refresh .git/index for it. Made before `mode` takes git off the PATH."""
    git_repository_with_one_commit(tmp_path)
    os.utime(tmp_path / "a.txt", (1, 1))


@once("v3")
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("command", ["git diff", "git status"])
def test_git_does_not_rewrite_the_index_when_only_a_timestamp_changed(
    scripted_api, agent, touched_repo, mode, tmp_path, command
):
    """GIT_OPTIONAL_LOCKS=0 keeps git status from refreshing .git/index, not git diff."""
    before = files(tmp_path)
    result = read_only_result(scripted_api, agent, command)
    assert result["content"].endswith("[exit code 0]"), result["content"]
    assert files(tmp_path) == before


@once("v3")
@pytest.mark.parametrize(
    "command", ["sort -T . a.txt", "sort --temporary-directory=. a.txt", "sort -zT/tmp a.txt"]
)
def test_sort_may_not_choose_where_its_temp_files_go(scripted_api, agent, mode, command):
    result = read_only_result(scripted_api, agent, command)
    assert (
        result["is_error"]
        and "refused: sort -" in result["content"]
        and "writes files" in result["content"]
    )


@once("v3")
@pytest.mark.skipif(sys.platform != "linux", reason="ulimit -v limits memory on Linux only; "
                    "macOS does not enforce it and Windows has no ulimit")
def test_every_command_has_a_memory_limit(scripted_api, agent, mode):
    result = read_only_result(scripted_api, agent, "sort /dev/zero")  # one endless line, held whole
    assert "memory exhausted" in result["content"]


@once("v3")
def test_the_api_key_is_not_in_a_commands_environment(scripted_api, agent, mode):
    """With parsing only, /proc may not be named at all (tests/test_plumbing_sandbox.py)."""
    assert os.environ["ANTHROPIC_API_KEY"]
    content = read_only_result(scripted_api, agent, "cat /proc/self/environ")["content"]
    assert os.environ["ANTHROPIC_API_KEY"] not in content
    shown = "PATH=" in content
    assert shown == (mode == "sandbox")


@once("v3")
def test_the_start_up_line_says_once_which_protection_is_in_force(
    scripted_api, version, mode, tmp_path
):
    scripted_api.play({"turns": [{"text": "ok"}]})
    done = run_in_process(ROOT / SCRIPTS[version], "--workdir", str(tmp_path), "hi")
    assert done.returncode == 0, done.stderr
    said = {"sandbox": "enforced by the parser, then bubblewrap: no writes",
            "parsing only": "enforced by parsing only here ("}
    assert done.stdout.count(said[mode]) == 1, done.stdout
    assert done.stdout.count("read_only_bash: read-only is enforced by") == 1


@once("v3")
# -- what only the sandbox adds --
def test_reads_stay_in_the_work_folder(scripted_api, agent, sandboxed, tmp_path, tmp_path_factory):
    secret = tmp_path_factory.mktemp("elsewhere") / "secret.txt"
    secret.write_text("the user's secret")
    assert "No such file" in read_only_result(scripted_api, agent, f"cat {secret}")["content"]
    assert "No such file" in read_only_result(scripted_api, agent, "ls /root")["content"]
    assert "secret" not in read_only_result(scripted_api, agent, "grep -r secret /tmp")["content"]


@once("v3")
def test_there_is_no_network(scripted_api, agent, sandboxed):
    interfaces = read_only_result(scripted_api, agent, "cat /proc/net/dev")["content"].splitlines()[
        2:-1
    ]
    assert [line.split(":")[0].strip() for line in interfaces] == ["lo"]


@once("v3")
def test_a_command_the_parser_let_through_still_cannot_write(agent, sandboxed, tmp_path):
    """The second layer alone: a write the parser would refuse, run straight in the sandbox."""
    done = subprocess.run(
        [*sandbox_argv(tmp_path), "--", "sh", "-c", "echo x > written.txt"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "Read-only file system" in done.stderr
    assert not (tmp_path / "written.txt").exists()


@once("v3")
def test_no_process_outlives_its_command(agent, sandboxed, tmp_path):
    marker = f"{uuid.uuid4().int % 10**6}.{os.getpid()}"  # a unique sleep length to look for
    subprocess.run(
        [*sandbox_argv(tmp_path), "--", "sh", "-c", f"setsid sleep {marker} & echo started"],
        capture_output=True,
        check=True,
    )
    deadline = (
        time.monotonic() + 5
    )  # the namespace's processes are killed as it ends; let that land
    while sleeping(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sleeping(marker)


def sleeping(marker: str) -> bool:
    return (
        subprocess.run(
            ["pgrep", "-f", f"sleep {marker}"], capture_output=True, check=False
        ).returncode
        == 0
    )
