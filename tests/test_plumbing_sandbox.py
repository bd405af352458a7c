"""plumbing/sandbox.py and the /proc guard of plumbing/read_only.py: a read-only command sees no
secret and runs no program that a repository or the environment names, in both modes; the
sandbox's /dev and root are read-only and its processes limited; no temp folder stays behind.
Each OS's branch: macOS's sandbox-exec command line and its profile's rules, Windows' parsing
only through the bash tool's shell (bash, or PowerShell's quoting), forced here by handing the
code that OS's Platform; where the test runs on that OS, the real thing.

`mode` (from tests/test_sandbox.py) runs a test under bubblewrap and with parsing only. Pipelines
go to run_read_only() as the parser would hand them over.
"""

import dataclasses
import io
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from rich.console import Console

from plumbing.checks import ToolError
from plumbing.platforms import Shell, linux, macos, this_platform, windows
from plumbing.read_only import parse_read_only, refuse_process_files
from plumbing.sandbox import (
    LIMITS_SCRIPT,
    READ_ONLY_MEMORY_KB,
    SANDBOX_LIMITS_SCRIPT,
    SANDBOX_PROCESSES,
    SANDBOX_TMP_BYTES,
    SEATBELT_PROFILE,
    SEATBELT_RULES,
    SEATBELT_WARNING,
    git_driver_settings,
    launcher_environment,
    note_read_only_protection,
    private_prefix,
    read_only_path,
    read_only_stages,
    remove_private_folders,
    run_read_only,
    run_stages,
    sandbox_argv,
    sandbox_program,
    seatbelt_argv,
    windows_command_line,
)
from plumbing.screen import Screen
from tests import test_sandbox
from tests.agents import git_repository_with_one_commit
from tests.test_subagents import files

mode = test_sandbox.mode  # the fixture: under bubblewrap, then with parsing only
sandboxed = test_sandbox.sandboxed  # the fixture: skips where bubblewrap cannot run

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="needs git")
needs_proc = pytest.mark.skipif(
    sys.platform != "linux", reason="/proc is Linux's: elsewhere there is none to keep away")


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
@needs_proc
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
     "/", "../../../../../../../../proc", "/dev/fd", "/dev/fd/../environ", "//proc/1/environ",
     "/./proc/1/environ", "/tmp/../proc/1/environ", "/PROC/1/environ", "\\proc\\1\\environ",
     "--file=\\proc\\1\\environ", "C:/Users/../../proc/1/environ",
     "C:/Program Files/Git/proc/1/environ", "c:\\program files\\git\\PROC"],
)
def test_with_parsing_only_no_word_may_reach_proc_on_any_os(work, word):
    """The words are read as text, the same on every OS: as Linux reads them, and as Git for
    Windows' tools do, which have a /proc of their own (Windows itself would resolve /proc to
    C:\\proc), read \\ as /, climb from C:/ to Git's root with .., and whose /proc Windows
    spells C:/Program Files/Git/proc."""
    with pytest.raises(ToolError, match="reaches /proc"):
        refuse_process_files([["cat", "a.txt"], ["grep", word]])


@needs_proc
def test_with_parsing_only_a_link_into_proc_is_refused(work):
    (work / "link-to-proc").symlink_to("/proc/self")
    with pytest.raises(ToolError, match="reaches /proc"):
        refuse_process_files([["grep", "-r", "x", "link-to-proc"]])


@pytest.mark.parametrize("word", ["a.txt", "-n", "--include=*.py", "/usr/share", "-e/procedure",
                                  "proc/notes.txt", "src/proc.c", "C:/Users/me/procedure",
                                  "../proc"])
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


@needs_git
def test_git_keeps_the_systems_core_autocrlf_so_a_crlf_checkout_is_not_changed(repo, mode):
    """Git for Windows' installer sets core.autocrlf=true in the system's git config, and checks
    text files out with \r\n. Read-only git reads that config as the user's git does."""
    system = subprocess.run([GIT, "config", "--system", "--get", "core.autocrlf"],
                            capture_output=True, text=True, check=False)
    if system.stdout.strip() != "true":
        pytest.skip("the system's git config sets no core.autocrlf=true here (Git for Windows' "
                    "does)")
    (repo / "a.txt").write_bytes(b"alpha\r\n")  # as Git for Windows checks it out
    subprocess.run([GIT, "-c", "core.autocrlf=true", "add", "a.txt"], cwd=repo, check=True)
    later = (repo / "a.txt").stat().st_mtime + 10  # the file touched since: git reads it again
    os.utime(repo / "a.txt", (later, later))
    assert read_only("git", "status", "--porcelain") == ("", 0)


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


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO (os.mkfifo): Windows has none")
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


# -- PATH: the user's own tools, never the work folder's --
def tool(folder, name: str, says: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"#!/bin/sh\necho {says}\n")
    (folder / name).chmod(0o755)


@pytest.mark.skipif(sys.platform == "win32", reason="the tools here are POSIX shell scripts")
def test_the_users_own_tools_are_on_the_path_but_not_the_work_folders(work, tmp_path_factory,
                                                                        monkeypatch):
    """Homebrew's folders, ~/.local/bin: what the user put on PATH stays. A folder inside the
    work folder, or a relative one, goes: a repository could put a `cat` of its own there."""
    mine = tmp_path_factory.mktemp("home") / "bin"
    tool(mine, "hello-tool", "the-users-tool")
    tool(work / "node_modules" / ".bin", "hello-tool", "the-repositorys-tool")
    tool(work / "bin", "hello-tool", "the-repositorys-tool")
    folders = [str(work / "node_modules" / ".bin"), "bin", str(mine), os.environ["PATH"]]
    monkeypatch.setenv("PATH", os.pathsep.join(folders))
    parsing_only = dataclasses.replace(this_platform(), read_only_sandbox="")
    output, _ = run_read_only([["hello-tool"]], 10, threading.Event(), parsing_only)
    assert output == "the-users-tool"


# -- the start-up note: what keeps read-only commands read-only here --
@pytest.mark.parametrize(
    "platform, says",
    [pytest.param(macos(), "parsing only here (sandbox-exec is missing or cannot start)",
                  marks=pytest.mark.skipif(sys.platform == "darwin", reason="sandbox-exec is "
                                           "here: test_on_macos_read_only_commands_run_under_...")),
     (windows(), "parsing only here (this OS has no sandbox a program can start)")],
)
def test_the_note_says_which_protection_is_in_force(work, platform, says, monkeypatch):
    """macOS without sandbox-exec (as on this Linux machine), Windows always: the parser only.
    Linux's two notes are seen in tests/test_sandbox.py, under bubblewrap and without."""
    buffer = io.StringIO()
    note_read_only_protection(Screen(Console(file=buffer, width=200)), platform)
    assert buffer.getvalue().strip() == f"[read_only_bash: read-only is enforced by {says}; " \
                                        "the parser still refuses anything that writes]"


# -- macOS: Seatbelt (sandbox-exec), forced here --
@pytest.mark.skipif(sys.platform == "win32", reason="a symbolic link needs a privilege on Windows")
def test_on_macos_a_command_runs_under_sandbox_exec_with_the_private_folder_resolved(tmp_path):
    """Seatbelt compares real paths: the private folder is given as the OS resolves it."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    argv = seatbelt_argv("/usr/bin/sandbox-exec", str(tmp_path / "link"))
    assert argv == ["/usr/bin/sandbox-exec", "-p", SEATBELT_PROFILE,
                    "-D", f"PRIVATE={os.path.realpath(tmp_path / 'real')}"]


def test_on_macos_each_command_runs_its_words_through_a_fixed_script_inside_sandbox_exec(work):
    """sandbox-exec, then sh with LIMITS_SCRIPT, whose `exec "$@"` runs the words as they are."""
    stages = read_only_stages([["grep", "-n", "$HOME *", "a.txt"], ["wc", "-l"]], str(work), [],
                              "sandbox-exec", macos())
    launcher = [sandbox_program("sandbox-exec") or "sandbox-exec", "-p", SEATBELT_PROFILE,
                "-D", f"PRIVATE={os.path.realpath(work)}", "/bin/sh", "-c", LIMITS_SCRIPT, "sh"]
    assert stages == [[*launcher, "grep", "-n", "$HOME *", "a.txt"], [*launcher, "wc", "-l"]]


def test_the_limits_are_set_by_fixed_text_that_runs_the_words_as_they_are():
    assert LIMITS_SCRIPT == f'ulimit -v {READ_ONLY_MEMORY_KB} 2>/dev/null; exec "$@"'
    assert SANDBOX_LIMITS_SCRIPT == (
        f"ulimit -v {READ_ONLY_MEMORY_KB} 2>/dev/null; "
        f"{{ ulimit -u {SANDBOX_PROCESSES} || ulimit -p {SANDBOX_PROCESSES}; }} 2>/dev/null; "
        'exec "$@"')


def test_the_seatbelt_profile_starts_from_deny_default():
    """Claude Code's and Codex's profiles start there too: what no rule allows is denied."""
    assert SEATBELT_RULES[:2] == ["(version 1)", "(deny default)"]
    assert SEATBELT_PROFILE == "\n".join(SEATBELT_RULES) + "\n"
    assert [rule for rule in SEATBELT_RULES if rule.startswith("(allow default")] == []


SEATBELT_RULE = re.compile(r"^\((allow|deny) ([\w*-]+)(.*)\)$")
SEATBELT_FILTER = re.compile(r'\((subpath|literal|global-name|sysctl-name-prefix|sysctl-name|'
                             r'target) (?:"([^"]*)"|\(param "(\w+)"\)|([\w-]+))\)')


def seatbelt_decides(operation: str, target: str, params: dict[str, str]) -> str:
    """What SEATBELT_PROFILE decides for an operation on a target (a path, a service, a sysctl,
    a process), by the rule Apple's sandbox applies: of the rules whose operation and filters
    match, the last one wins; a rule's filters match if any one does. Only the forms the profile
    uses are read, and an unknown one fails the test."""
    decision = "no rule"
    for line in SEATBELT_PROFILE.splitlines()[1:]:
        action, rule_operation, rest = SEATBELT_RULE.match(line).groups()
        if rule_operation != "default" and not (
                rule_operation == operation
                or rule_operation.endswith("*") and operation.startswith(rule_operation[:-1])):
            continue
        filters = SEATBELT_FILTER.findall(rest)
        known = rest.count("(") - rest.count("(param")
        assert len(filters) == known, f"a filter this reading does not know: {line}"
        if filters and not any(filter_matches(kind, literal or params.get(param) or word, target)
                               for kind, literal, param, word in filters):
            continue
        decision = action
    return decision


def filter_matches(kind: str, value: str, target: str) -> bool:
    if kind == "subpath":
        return target == value or target.startswith(value.rstrip("/") + "/")
    if kind == "sysctl-name-prefix":
        return target.startswith(value)
    return target == value  # literal, global-name, sysctl-name, target


@pytest.mark.parametrize(
    "operation, target, decision",
    [("file-write-data", "/Users/me/project/a.txt", "deny"),
     ("file-write-create", "/Users/me/.zshrc", "deny"),
     ("file-write-create", "/private/var/folders/xy/T/read-only-1-ab/x", "deny"),  # a neighbour
     ("file-write-create", "/private/var/folders/xy/T/read-only-1-a/sort.tmp", "allow"),
     ("file-write-data", "/dev/null", "allow"),
     ("file-write-unlink", "/dev/null", "deny"),
     ("file-write-data", "/dev/nullx", "deny"),
     ("network-outbound", "", "deny"), ("network-bind", "", "deny"),
     ("file-read-data", "/Users/me/project/a.txt", "allow"), ("process-exec", "/bin/sh", "allow"),
     ("process-fork", "", "allow"),
     ("mach-lookup", "com.apple.system.opendirectoryd.libinfo", "allow"),  # ls -l's user names
     ("mach-lookup", "com.apple.cfprefsd.daemon", "deny"),  # defaults write
     ("mach-lookup", "com.apple.coreservices.launchservicesd", "deny"),  # open
     ("mach-lookup", "com.apple.launchd", "deny"),
     ("sysctl-read", "hw.ncpu", "allow"), ("sysctl-read", "kern.osrelease", "allow"),
     ("sysctl-read", "kern.procargs2", "deny"), ("sysctl-read", "kern.proc.pid.1", "deny"),
     ("sysctl-write", "kern.hostname", "deny"),
     ("signal", "same-sandbox", "allow"), ("signal", "others", "deny"),
     ("ipc-posix-shm-write-create", "", "deny"), ("user-preference-read", "", "allow"),
     ("user-preference-write", "", "deny")],
)
def test_the_seatbelt_profile_allows_what_a_read_only_command_needs_and_nothing_more(
        operation, target, decision):
    params = {"PRIVATE": "/private/var/folders/xy/T/read-only-1-a"}
    assert seatbelt_decides(operation, target, params) == decision


def test_sandbox_exec_s_warning_is_kept_out_of_the_result(work, tmp_path):
    """macOS 15 and later: sandbox-exec writes it to the error output of every command."""
    warn = f'echo "{SEATBELT_WARNING}" >&2; '
    stages = [["/bin/sh", "-c", warn + "echo one; echo two"], ["/bin/sh", "-c", warn + "cat"]]
    assert run_stages(stages, 10, threading.Event(), str(tmp_path), linux()) == ("one\ntwo", 0)
    with pytest.raises(ToolError) as stopped:
        run_stages([["/bin/sh", "-c", warn + "echo so-far; exec sleep 30"]], 0.3,
                   threading.Event(), str(tmp_path), linux())
    assert str(stopped.value) == "timed out after 0.3 s and was stopped. Output so far:\nso-far"


@pytest.mark.parametrize("platform, locale", [(linux(), "C.UTF-8"), (macos(), "en_US.UTF-8"),
                                              (windows(), "C.UTF-8")],
                         ids=["linux", "macos", "windows"])
def test_the_locale_is_one_every_supported_version_of_the_os_has(work, platform, locale):
    """C.UTF-8 came to macOS with version 15; en_US.UTF-8 is on every one."""
    env = launcher_environment(str(work), platform)
    assert (env["LANG"], env["LC_ALL"]) == (locale, locale)


needs_seatbelt = pytest.mark.skipif(
    sys.platform != "darwin" or shutil.which("sandbox-exec") is None,
    reason="needs macOS's sandbox-exec (the GitHub workflow runs this on macos-latest)")


@needs_seatbelt
def test_under_real_seatbelt_nothing_is_written_but_in_the_private_folder(work, tmp_path_factory):
    private = tmp_path_factory.mktemp("private")
    script = "echo x > written.txt; echo y > \"$PRIVATE_FOLDER/kept.txt\""
    done = subprocess.run([*seatbelt_argv("sandbox-exec", str(private)), "/bin/sh", "-c", script],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "PRIVATE_FOLDER": str(private)})
    assert "Operation not permitted" in done.stderr
    assert not (work / "written.txt").exists() and (private / "kept.txt").read_text() == "y\n"


@needs_seatbelt
def test_under_real_seatbelt_there_is_no_network(work, tmp_path_factory):
    """A server on this machine, which the sandboxed command cannot reach."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
        argv = [*seatbelt_argv("sandbox-exec", str(tmp_path_factory.mktemp("private"))),
                sys.executable, "-c", connect]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "Operation not permitted" in done.stderr


@needs_seatbelt
def test_on_macos_read_only_commands_run_under_seatbelt(a_txt):
    buffer = io.StringIO()
    note_read_only_protection(Screen(Console(file=buffer, width=200)))
    assert "the parser, then Seatbelt (sandbox-exec)" in buffer.getvalue()
    assert read_only("cat", "a.txt") == ("alpha\nbeta", 0)


# -- Windows: parsing only, each program started with its own command line; forced here --
@pytest.fixture
def a_txt(work):
    (work / "a.txt").write_bytes(b"alpha\nbeta\n")  # write_text: \r\n on Windows
    return work


POWERSHELL = dataclasses.replace(windows(), shell=Shell("PowerShell", "powershell.exe"))
needs_grep_and_head = pytest.mark.skipif(
    shutil.which("grep") is None or shutil.which("head") is None,
    reason="needs grep and head on PATH (on Windows, Git for Windows' usr/bin)")


@needs_grep_and_head
def test_on_windows_each_program_gets_its_words_in_double_quotes_named_by_its_path(
        a_txt, monkeypatch):
    """No shell between: PowerShell's `cat` (Get-Content) cannot stand in, and the program found
    on PATH runs, by its full path."""
    monkeypatch.delenv("PATHEXT", raising=False)
    stages = read_only_stages([["grep", "-n", "it's $HOME *", "a.txt"], ["head"]], "C:/private",
                              [], "", POWERSHELL)
    grep, head = shutil.which("grep"), shutil.which("head")
    assert stages == [f'"{grep}" "-n" "it\'s $HOME *" "a.txt"', f'"{head}"']


@pytest.mark.parametrize("word", ['say "hi" --output=x', "", "C:\\dir\\", "\\\\server\\share",
                                  'x\\"'])
def test_on_windows_a_word_the_two_ways_of_splitting_would_read_differently_is_refused(word):
    with pytest.raises(ToolError, match="cannot be passed on to a Windows program as one word"):
        windows_command_line(["C:/Git/usr/bin/grep.exe", word, "a.txt"])


def test_on_windows_a_program_not_on_the_path_is_named(a_txt):
    with pytest.raises(ToolError, match="^no-such-tool was not found on this computer's PATH$"):
        read_only_stages([["no-such-tool"]], "C:/private", [], "", POWERSHELL)


@needs_git
def test_on_windows_git_is_given_its_no_program_settings_too(a_txt, monkeypatch):
    monkeypatch.delenv("PATHEXT", raising=False)
    [line] = read_only_stages([["git", "diff"]], "C:/private", ["diff.x.textconv="], "",
                              POWERSHELL)
    assert '"-c" "core.fsmonitor=false"' in line and '"-c" "diff.x.textconv="' in line
    assert line.endswith('"diff" "--no-ext-diff" "--no-textconv" "--ignore-submodules"')


@pytest.mark.skipif(sys.platform == "win32", reason="plays PATHEXT with POSIX file modes")
@pytest.mark.parametrize("extension", [".bat", ".cmd", ".vbs"])
def test_on_windows_a_batch_file_or_script_is_refused(a_txt, tmp_path_factory, monkeypatch,
                                                      extension):
    """cmd.exe would run a .bat or .cmd and read & and > in its words again (Python's subprocess
    docs); a script needs another program. Found first on the PATH, it is refused, not skipped."""
    folder = tmp_path_factory.mktemp("npm")
    tool(folder, "grep" + extension, "batch")
    tool(folder / "later", "grep.exe", "a program")
    monkeypatch.setenv("PATHEXT", os.pathsep.join([".com", ".exe", extension, ".js"]))
    with_path(monkeypatch, folder, folder / "later")
    with pytest.raises(ToolError) as refused:
        read_only_stages([["grep", "x", "a.txt"]], "C:/private", [], "", POWERSHELL)
    assert str(refused.value) == (
        f"refused: grep here is {folder / ('grep' + extension)}, which Windows does not start as "
        "a program (a .bat or .cmd file runs in cmd.exe, which reads its words again); install "
        "the POSIX tool (Git for Windows has it)")
    with_path(monkeypatch, folder / "later")
    assert read_only_stages([["grep", "x"]], "C:/private", [], "", POWERSHELL) == [
        f'"{folder / "later" / "grep.exe"}" "x"']


# Windows' own sort.exe, find.exe and tree.com take /options the parser does not check (sort /O
# writes a file); Git for Windows keeps the POSIX tools in Git/usr/bin, seldom on the PATH.
@pytest.fixture
def drive(tmp_path_factory, monkeypatch):
    """Folders that play Git for Windows (Git/bin/bash, Git/usr/bin/sort) and Windows
    (Windows/System32/sort and find, which leave a file, as sort /O would)."""
    root = tmp_path_factory.mktemp("drive")
    tool(root / "Git" / "usr" / "bin", "sort", "gits-posix-sort")
    for name in ["sort", "find"]:
        tool(root / "Windows" / "System32", name, f"windows-own-{name}; touch written-by-{name}")
    (root / "Git" / "bin").mkdir()
    (root / "Git" / "bin" / "bash").write_text("")
    monkeypatch.setenv("SYSTEMROOT", str(root / "Windows"))
    monkeypatch.delenv("PATHEXT", raising=False)
    return root


def git_bash_in(drive):
    return dataclasses.replace(windows(), shell=Shell("bash", str(drive / "Git/bin/bash")))


def with_path(monkeypatch, *folders) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join(str(folder) for folder in folders))


needs_posix_stand_ins = pytest.mark.skipif(
    sys.platform == "win32", reason="the stand-ins are POSIX shell scripts")


@needs_posix_stand_ins
@pytest.mark.parametrize("shell, name", [("PowerShell", "sort"), ("bash", "find")])
def test_on_windows_a_program_found_only_in_windows_own_folder_is_refused(
        a_txt, drive, monkeypatch, shell, name):
    """PowerShell (no Git for Windows found), or Git's bash whose usr/bin lacks this tool."""
    with_path(monkeypatch, drive / "Windows" / "System32")
    platform = POWERSHELL if shell == "PowerShell" else git_bash_in(drive)
    own = drive / "Windows" / "System32" / name
    with pytest.raises(ToolError) as refused:
        run_read_only([[name, "a.txt"]], 10, threading.Event(), platform)
    assert str(refused.value) == (
        f"refused: {name} here is Windows' own {own}, whose /options the read-only rules do not "
        "check (sort /O writes a file); install Git for Windows: its POSIX tools "
        "(Git\\usr\\bin) are looked up first")
    assert list(a_txt.iterdir()) == [a_txt / "a.txt"]


@needs_posix_stand_ins
def test_on_windows_both_shells_name_the_same_programs_gits_before_system32(
        a_txt, drive, monkeypatch):
    """With PowerShell, Git's usr/bin is on the PATH after System32; Git's bash has Git's folders
    first, also on the PATH of what its programs start in turn."""
    git_tools = drive / "Git" / "usr" / "bin"
    system32 = drive / "Windows" / "System32"
    with_path(monkeypatch, system32, git_tools, "/usr/bin")
    sort, grep = git_tools / "sort", shutil.which("grep", path="/usr/bin")
    pipeline = [["sort", "a.txt"], ["grep", "x"]]
    for platform in [POWERSHELL, git_bash_in(drive)]:
        stages = read_only_stages(pipeline, "C:/private", [], "", platform)
        assert stages == [f'"{sort}" "a.txt"', f'"{grep}" "x"']
    path = launcher_environment("C:/private", git_bash_in(drive))["PATH"]
    assert path.split(os.pathsep) == [str(git_tools), str(drive / "Git/mingw64/bin"),
                                      str(system32), str(git_tools), "/usr/bin"]


@pytest.mark.parametrize("platform", [linux(), macos()], ids=["linux", "macos"])
def test_on_linux_and_macos_sh_finds_each_program_on_the_path(
        a_txt, tmp_path_factory, monkeypatch, platform):
    """No lookup of ours, and no Git folders: the PATH without the work folder's."""
    tools, system = tmp_path_factory.mktemp("tools"), tmp_path_factory.mktemp("system")
    with_path(monkeypatch, tools, a_txt, system)
    stages = read_only_stages([["sort", "a.txt"], ["grep", "x"]], str(a_txt), [], "", platform)
    assert stages == [["/bin/sh", "-c", LIMITS_SCRIPT, "sh", "sort", "a.txt"],
                      ["/bin/sh", "-c", LIMITS_SCRIPT, "sh", "grep", "x"]]
    path = launcher_environment(str(a_txt), platform)["PATH"]
    assert path.split(os.pathsep) == [str(tools), str(system)]


@pytest.mark.skipif(sys.platform != "win32", reason="needs Windows (the GitHub workflow's)")
def test_on_windows_read_only_commands_run_each_program_itself(a_txt):
    buffer = io.StringIO()
    note_read_only_protection(Screen(Console(file=buffer, width=200)))
    assert "parsing only here (this OS has no sandbox a program can start)" in buffer.getvalue()
    output, exit_code = read_only("git", "--version")
    assert exit_code == 0 and output.startswith("git version"), output
    for word in ATTACKS.values():
        (a_txt / "a.txt").write_text(word + "\n", encoding="utf-8")
        assert read_only("grep", "-c", "-F", "-x", "-e", word, "a.txt") == ("1", 0)
        assert list(a_txt.iterdir()) == [a_txt / "a.txt"]


# -- each attack, on each OS's branch: the words reach the program as they are --
ATTACKS = {  # a word the parser lets through, and what a shell between it and the program makes
    "PowerShell's ’": "x’; Set-Content -Path pwned.txt -Value 1; ’",
    "PowerShell's ‘ and ‚": "x‘; Set-Content -Path pwned.txt -Value 1; ‚",
    "PowerShell's ‛": "x‛; Set-Content -Path pwned.txt -Value 1; ‛",
    "PowerShell's '": "x'; Set-Content -Path pwned.txt -Value 1; '",
    "a second command": "x; touch pwned.txt",
    "a background job": "x & touch pwned.txt",
    "a redirection": "x > pwned.txt",
    "a glob": "*.txt",
    "a variable": "$HOME",
    "a brace and a tilde": "~/{a,b}",
    "MSYS2's @file": "@pwned-args",
    "MSYS2's single quotes": "'-opwned.txt'",
}
GREP_AND_HEAD = {"grep": [], "head": []}


def attack_command(word: str) -> str:
    return f"grep -c -F -x -e {shlex.quote(word)} a.txt | head -n 1"


@pytest.fixture
def attack_files(work):
    """a.txt holds each attack word as a line, so grep -x counts 1 only if it got the word whole;
    pwned-args would give MSYS2's @file new words."""
    (work / "a.txt").write_text("".join(word + "\n" for word in ATTACKS.values()),
                                encoding="utf-8")
    (work / "pwned-args").write_text("--output=pwned.txt\n")
    return work


@pytest.mark.parametrize("attack", ATTACKS)
def test_each_attack_reaches_the_program_as_one_word_on_linux(attack_files, mode, attack):
    """Under bubblewrap and with parsing only (where bubblewrap cannot start)."""
    pipeline = parse_read_only(attack_command(ATTACKS[attack]), GREP_AND_HEAD)
    assert run_read_only(pipeline, 10, threading.Event()) == ("1", 0)
    assert sorted(path.name for path in attack_files.iterdir()) == ["a.txt", "pwned-args"]


@pytest.mark.parametrize("attack", ATTACKS)
def test_each_attack_reaches_the_program_as_one_word_on_macos(attack_files, attack):
    """macOS's branch, run here with parsing only (no sandbox-exec here); under Seatbelt the
    stages are the same, after sandbox-exec's words (test_on_macos_each_command_runs_...)."""
    pipeline = parse_read_only(attack_command(ATTACKS[attack]), GREP_AND_HEAD)
    assert run_read_only(pipeline, 10, threading.Event(), macos()) == ("1", 0)
    assert sorted(path.name for path in attack_files.iterdir()) == ["a.txt", "pwned-args"]


@needs_grep_and_head
@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("shell", [Shell("PowerShell", "powershell.exe"),
                                   Shell("bash", "C:/Git/bin/bash.exe")], ids=lambda s: s.name)
def test_each_attack_reaches_the_program_as_one_word_on_windows(attack_files, monkeypatch,
                                                               attack, shell):
    """Windows' branch, as data: each word in double quotes, with no double quote, no two
    backslashes and no final one in it, which the C runtime and MSYS2 both read as that one word,
    unexpanded. Neither shell is between them."""
    monkeypatch.delenv("PATHEXT", raising=False)
    pipeline = parse_read_only(attack_command(ATTACKS[attack]), GREP_AND_HEAD)
    stages = read_only_stages(pipeline, "C:/private", [], "",
                              dataclasses.replace(windows(), shell=shell))
    grep, head = shutil.which("grep"), shutil.which("head")
    assert stages == [f'"{grep}" "-c" "-F" "-x" "-e" "{ATTACKS[attack]}" "a.txt"',
                      f'"{head}" "-n" "1"']


@pytest.mark.parametrize("platform", [linux(), macos(), windows()],
                         ids=["linux", "macos", "windows"])
def test_with_parsing_only_proc_is_refused_through_the_front_door_on_each_os(work, platform):
    parsing_only = dataclasses.replace(platform, read_only_sandbox="")
    with pytest.raises(ToolError, match="reaches /proc"):
        run_read_only([["cat", "/proc/1/environ"]], 10, threading.Event(), parsing_only)


# -- the sandbox's argument lists, word for word (they hold where bubblewrap cannot run too) --
def test_bubblewraps_argument_list(work):
    """Dropping any of these (--unshare-net, say) fails here, with or without bubblewrap."""
    expected = [sandbox_program("bwrap") or "bwrap", "--die-with-parent", "--new-session",
                "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--cap-drop", "ALL", "--clearenv", "--dev", "/dev", "--remount-ro", "/dev",
                "--proc", "/proc", "--size", str(SANDBOX_TMP_BYTES), "--tmpfs", "/tmp"]
    for path in ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/passwd",
                 "/etc/group", "/etc/nsswitch.conf", "/etc/ld.so.cache", "/etc/localtime",
                 "/etc/alternatives", "/etc/magic", "/etc/magic.mime", "/etc/gitconfig"]:
        expected += ["--ro-bind-try", path, path]
    expected += ["--ro-bind", str(work), str(work), "--chdir", str(work), "--remount-ro", "/"]
    inside = {"GIT_OPTIONAL_LOCKS": "0", "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0",
              "GIT_PAGER": "cat", "PAGER": "cat", "LANG": "C.UTF-8",
              "LC_ALL": "C.UTF-8", "PATH": read_only_path(), "HOME": "/tmp", "TMPDIR": "/tmp"}
    for name, value in inside.items():
        expected += ["--setenv", name, value]
    assert sandbox_argv(work) == expected


def test_under_bubblewrap_each_command_runs_its_words_through_the_fixed_script(work):
    stages = read_only_stages([["grep", "-n", "$HOME *", "a.txt"], ["wc", "-l"]], str(work), [],
                              "bubblewrap", linux())
    launcher = [*sandbox_argv(work), "--", "/bin/sh", "-c", SANDBOX_LIMITS_SCRIPT, "sh"]
    assert stages == [[*launcher, "grep", "-n", "$HOME *", "a.txt"], [*launcher, "wc", "-l"]]


@pytest.mark.parametrize("platform", [linux(), macos()], ids=["linux", "macos"])
def test_bwrap_or_a_command_starts_with_no_secret_in_its_environment(work, monkeypatch,
                                                                     platform):
    """With --unshare-pid, bwrap is PID 1 inside and /proc/1/environ shows what it started
    with: the same few settings as the command gets."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "the-other-key")
    private = str(work)
    assert launcher_environment(private, platform) == {
        "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat", "PAGER": "cat",
        "LANG": platform.utf8_locale, "LC_ALL": platform.utf8_locale,
        "PATH": read_only_path(), "HOME": private, "TMPDIR": private, "TEMP": private,
        "TMP": private}


@pytest.mark.skipif(sys.platform == "win32", reason="the program here is a POSIX shell script")
@pytest.mark.parametrize("name", ["bwrap", "sandbox-exec"])
def test_a_sandbox_program_in_the_work_folder_is_never_the_one_run(work, monkeypatch, name):
    """A PATH with "." or a folder of the repository would find the repository's own `bwrap`:
    one that runs the command without a sandbox, or does anything else."""
    tool(work, name, "the-repositorys-sandbox")
    monkeypatch.setenv("PATH", os.pathsep.join([".", str(work), os.environ["PATH"]]))
    found = sandbox_program(name)
    assert found is None or work.resolve() not in Path(found).resolve().parents, found


def test_linux_is_the_platform_that_names_bubblewrap():
    assert (linux().read_only_sandbox, macos().read_only_sandbox, windows().read_only_sandbox) \
        == ("bubblewrap", "sandbox-exec", "")
