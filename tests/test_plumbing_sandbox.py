"""plumbing/sandbox.py and the /proc guard of plumbing/read_only.py: a read-only command sees no
secret and runs no program that a repository or the environment names, in both modes; the
sandbox's /dev and root are read-only and its processes limited; no temp folder stays behind.

`mode` (from tests/test_sandbox.py) runs a test under bubblewrap and with parsing only. Pipelines
go to run_read_only() as the parser would hand them over.
"""

import os
import shutil
import subprocess
import tempfile
import threading

import pytest

from plumbing.checks import ToolError
from plumbing.read_only import refuse_process_files
from plumbing.sandbox import (
    SANDBOX_PROCESSES,
    git_driver_settings,
    private_prefix,
    remove_private_folders,
    run_read_only,
)
from tests import test_sandbox
from tests.agents import git_repository_with_one_commit
from tests.test_subagents import files

mode = test_sandbox.mode  # the fixture: under bubblewrap, then with parsing only
sandboxed = test_sandbox.sandboxed  # the fixture: skips where bubblewrap cannot run

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="needs git")


def read_only(*argv: str, timeout: float = 10) -> tuple[str, int]:
    return run_read_only([list(argv)], timeout, threading.Event())


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def repo(work):
    """A repository with a.txt committed. Made before `mode` takes git off the PATH."""
    git_repository_with_one_commit(work)
    return work


# -- no secret --
@pytest.mark.parametrize("path", ["/proc/self/environ", "/proc/1/environ", "/proc/{agent}/environ"])
def test_no_secret_of_the_environment_is_visible(work, mode, monkeypatch, path):
    """In the sandbox /proc is its own, and bwrap itself (its PID 1) starts with no secret; with
    parsing only, /proc may not be named."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-key")
    path = path.format(agent=os.getpid())
    if mode == "parsing only":
        with pytest.raises(ToolError, match="reaches /proc, where other processes' environments"):
            read_only("grep", "-r", "-a", "KEY", path)
        return
    output, _ = read_only("grep", "-r", "-a", "KEY", path)
    assert "sk-ant-the-key" not in output


@pytest.mark.parametrize(
    "word",
    ["/proc/self/environ", "--file=/proc/1/environ", "-f/proc/1/environ", "-rf/proc/1/environ",
     "/", "../../../../../../../../proc", "/dev/fd", "link-to-proc"],
)
def test_with_parsing_only_no_word_may_reach_proc(work, word):
    (work / "link-to-proc").symlink_to("/proc/self")
    with pytest.raises(ToolError, match="reaches /proc"):
        refuse_process_files([["cat", "a.txt"], ["grep", word]])


@pytest.mark.parametrize("word", ["a.txt", "-n", "--include=*.py", "/usr/share", "-e/procedure"])
def test_other_words_are_left_alone(work, word):
    refuse_process_files([["grep", word]])


# -- no program: git's drivers, and git settings in the environment --
@pytest.fixture
def driver_repo(work, tmp_path_factory):
    """A repository whose filter and diff drivers would each leave a file in `marks`; a.txt was
    changed since it was committed, so status, diff and blame would run its clean filter."""
    marks = tmp_path_factory.mktemp("marks")
    git_repository_with_one_commit(work)
    (work / ".gitattributes").write_text("*.txt filter=evil diff=shown\n")
    for key in ["filter.evil.clean", "filter.evil.smudge", "filter.evil.process",
                "diff.shown.textconv", "diff.shown.command"]:
        subprocess.run([GIT, "config", key, f"touch {marks / key}; cat"], cwd=work, check=True)
    subprocess.run([GIT, "config", "filter.evil.required", "true"], cwd=work, check=True)
    (work / "a.txt").write_text("alpha\nbeta\n")
    return marks


@needs_git
@pytest.mark.parametrize(
    "argv",
    [["git", "status"], ["git", "status", "-v"], ["git", "diff"], ["git", "log", "-p"],
     ["git", "show"], ["git", "blame", "a.txt"], ["git", "grep", "-n", "alpha"]],
)
def test_a_repositorys_drivers_run_no_program(driver_repo, mode, work, argv):
    before = files(work)
    output, exit_code = read_only(*argv)
    assert exit_code == 0, output
    assert list(driver_repo.iterdir()) == []
    assert files(work) == before


@pytest.fixture
def submodule_repo(work, tmp_path_factory):
    """The work folder's repository has a submodule whose own config names a filter driver, and
    a file of it changed in place (same size, new time): git status would hash it, through the
    filter, in a git it runs inside the submodule. The superproject's config names no driver."""
    marks = tmp_path_factory.mktemp("marks")
    inner = tmp_path_factory.mktemp("inner")
    git_repository_with_one_commit(inner)
    git_repository_with_one_commit(work)
    add = [GIT, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(inner), "sub"]
    subprocess.run(add, cwd=work, check=True, capture_output=True)
    clean = f"touch {marks / 'inside'}; cat"
    subprocess.run([GIT, "-C", "sub", "config", "filter.inside.clean", clean], cwd=work, check=True)
    (work / ".git" / "modules" / "sub" / "info").mkdir(exist_ok=True)
    (work / ".git" / "modules" / "sub" / "info" / "attributes").write_text("*.txt filter=inside\n")
    (work / "sub" / "a.txt").write_text("gamma\n")  # as long as "alpha\n"
    os.utime(work / "sub" / "a.txt", (1, 1))
    return marks


@needs_git
@pytest.mark.parametrize("argv", [["git", "status"], ["git", "diff"]])
def test_a_submodules_own_drivers_run_no_program(submodule_repo, mode, argv):
    output, exit_code = read_only(*argv)
    assert exit_code == 0, output
    assert list(submodule_repo.iterdir()) == []


@needs_git
def test_git_grep_asked_for_a_textconv_runs_none(driver_repo, mode, work):
    read_only("git", "grep", "--textconv", "alpha")
    assert list(driver_repo.iterdir()) == []


@needs_git
def test_git_grep_finds_what_it_looks_for(repo, mode):
    assert read_only("git", "grep", "-n", "alpha") == ("a.txt:1:alpha", 0)


@needs_git
def test_git_settings_in_the_environment_run_no_program(repo, tmp_path_factory, monkeypatch, mode):
    marks = tmp_path_factory.mktemp("marks")
    for name, value in {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor",
                        "GIT_CONFIG_VALUE_0": f"touch {marks / 'fsmonitor'}; false",
                        "GIT_CONFIG_PARAMETERS": f"'core.pager'='touch {marks / 'pager'}'",
                        "GIT_EXTERNAL_DIFF": f"touch {marks / 'diff'}"}.items():
        monkeypatch.setenv(name, value)
    (repo / "a.txt").write_text("changed\n")
    for command in (["git", "status"], ["git", "diff"]):
        assert read_only(*command)[1] == 0
    assert list(marks.iterdir()) == []


def test_each_driver_of_the_config_gets_its_programs_emptied():
    listed = "filter.lfs.clean\0filter.lfs.process\0diff.a.b.textconv\0diff.color\0"
    assert git_driver_settings(listed) == [
        "filter.lfs.clean=", "filter.lfs.smudge=", "filter.lfs.process=",
        "filter.lfs.required=false", "diff.a.b.textconv=", "diff.a.b.command="]


@pytest.mark.parametrize("name", ["filter.x=y.clean", "diff.caf\ufffd.textconv"])
def test_a_driver_that_cannot_be_named_on_the_command_line_is_refused(name):
    with pytest.raises(ToolError, match="cannot be switched off safely"):
        git_driver_settings(name + "\0")


# -- what only the sandbox adds --
ALLOWED_TO_WRITE = ["/tmp", "/proc", "/dev/pts", "/dev/null", "/dev/zero", "/dev/full",
                    "/dev/random", "/dev/urandom", "/dev/tty"]


def test_every_mount_is_read_only_but_tmp_proc_and_the_devices(work, sandboxed):
    output, _ = read_only("cat", "/proc/self/mountinfo")
    writable = [line.split()[4] for line in output.splitlines() if line.split()[5][:2] != "ro"]
    assert writable and [mount for mount in writable if mount not in ALLOWED_TO_WRITE] == []


def test_the_number_of_processes_is_limited(work, sandboxed):
    output, _ = read_only("grep", "processes", "/proc/self/limits")
    assert output.split()[2:4] == [str(SANDBOX_PROCESSES)] * 2


# -- no temp folder stays behind --
@pytest.fixture
def temp(tmp_path_factory, monkeypatch):
    """A temp folder of its own, to see what is left in it."""
    folder = tmp_path_factory.mktemp("temp")
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.mark.parametrize("end", ["done", "timeout", "Ctrl-C"])
def test_no_private_temp_folder_stays_behind(work, temp, mode, end):
    os.mkfifo(work / "waits")  # cat waits on it until it is stopped
    stopped = threading.Event()
    if end == "done":
        run_read_only([["ls"]], 10, stopped)
    elif end == "timeout":
        with pytest.raises(ToolError, match="timed out"):
            run_read_only([["cat", "waits"]], 0.3, stopped)
    else:
        threading.Timer(0.3, stopped.set).start()
        with pytest.raises(KeyboardInterrupt):
            run_read_only([["cat", "waits"]], 10, stopped)
    assert list(temp.iterdir()) == []


def test_on_exit_the_private_folders_a_thread_left_are_removed(temp):
    (temp / f"{private_prefix()}left").mkdir()
    (temp / f"{private_prefix()}left" / "sorted.tmp").write_text("x")
    (temp / "read-only-1-of-another-agent").mkdir()
    remove_private_folders()
    assert [path.name for path in temp.iterdir()] == ["read-only-1-of-another-agent"]
