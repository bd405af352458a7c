"""plumbing/commands.py: a command gets no credential, cannot read the agent's memory, and
leaves nothing running: on a timeout or Ctrl-C its whole tree ends, and on the agent's exit so
does whatever it left in the background, on Linux (which adopts orphans) and with only what
macOS and Windows offer (no subreaper, no session of its own on Windows).

The process tests look for `sleep` processes by a length no other test uses (psutil lists them);
their commands use setsid and nohup, and skip where there is no setsid (macOS).
"""

import dataclasses
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid

import psutil
import pytest

from plumbing.checks import ToolError
from plumbing.commands import in_sessions, run_command, run_pipeline
from plumbing.platforms import Shell, linux, macos, this_platform, windows
from tests.agents import ROOT

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="needs /proc and prctl (Linux)")
posix_shell = pytest.mark.skipif(os.name != "posix",
                                 reason="runs POSIX programs (printf, yes, sleep)")
# Without setsid the job it starts never runs, and a test that the job was ended would pass on
# nothing: it skips.
needs_setsid = pytest.mark.skipif(shutil.which("setsid") is None,
                                  reason="runs setsid (util-linux: macOS has none) and nohup")
# Each OS's way of starting and ending a command, with a shell this machine has: Windows' has no
# session of its own, no subreaper (and here no process-group flag: a Linux Popen refuses it).
PROCESS_BRANCHES = {"linux": linux(), "macos": macos(),
                    "windows": dataclasses.replace(windows(), shell=this_platform().shell)}


def unique_seconds() -> str:
    """A sleep length no other process has: how a test finds the processes it started."""
    return f"{1000 + uuid.uuid4().int % 10**6}.{os.getpid()}"


def running(seconds: str) -> bool:
    """Whether a `sleep <seconds>` runs (a zombie, killed and not yet collected, does not)."""
    for process in psutil.process_iter():
        try:
            if process.cmdline()[-1:] == [seconds] and process.status() != psutil.STATUS_ZOMBIE:
                return True
        except (psutil.Error, IndexError):  # it ended meanwhile, or another user's
            continue
    return False


def still_running_after_a_moment(seconds: str) -> bool:
    """Whether the sleep still runs once a SIGKILL sent to it has had time to land."""
    wait_while(lambda: running(seconds), 2)
    return running(seconds)


def running_within_a_moment(seconds: str) -> bool:
    """Whether the sleep runs, or starts soon: `nohup sleep` and `setsid sleep` may still be
    becoming `sleep` when the command that started them has already printed its last line."""
    wait_while(lambda: not running(seconds), 5)
    return running(seconds)


def wait_while(condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def tree_that_escapes_its_group(setsid: str, nohup: str, double_fork: str) -> str:
    """A command whose children leave its process group three ways, then waits for a long time."""
    return (f"setsid sleep {setsid} & nohup sleep {nohup} >/dev/null 2>&1 & "
            f"(setsid sleep {double_fork} &); sleep 30")


def test_a_command_gets_none_of_the_agents_credentials(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-the-key")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "the-token")
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "Authorization: Bearer the-gateway-token")
    monkeypatch.setenv("SOME_SETTING", "kept")
    output, exit_code = run_command("env", 10, threading.Event())
    assert exit_code == 0 and "SOME_SETTING=kept" in output
    assert [secret for secret in ("sk-the-key", "the-token", "the-gateway-token")
            if secret in output] == []


@linux_only
def test_a_command_cannot_read_the_agents_environment_through_proc():
    """/proc/<agent>/environ holds what the agent started with: the key, when it was exported.
    The agent makes itself not dumpable. Checked as an ordinary user: a root that keeps
    CAP_SYS_ADMIN (a privileged container, this CI's VM) may read any process's memory."""
    agent = ("import threading\n"
             "from plumbing.commands import run_command\n"
             "print(run_command('cat /proc/$PPID/environ', 10, threading.Event())[0])\n")
    argv = [sys.executable, "-c", agent]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("runs as root, and there is no setpriv to run the check as nobody")
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True)
    assert "Permission denied" in done.stdout
    assert "PATH=" not in done.stdout  # every process starts with a PATH


@needs_setsid
@pytest.mark.parametrize("platform", PROCESS_BRANCHES)
@pytest.mark.parametrize("stop", ["timeout", "Ctrl-C"])
def test_a_stopped_command_ends_with_its_whole_tree(stop, platform, tmp_path):
    seconds = [unique_seconds() for _ in range(4)]
    named = tmp_path / "a) b"  # /proc/<pid>/stat shows the name in parentheses, ") " and all
    shutil.copy(shutil.which("sleep"), named)
    command = tree_that_escapes_its_group(*seconds[:3]) + f" & '{named}' {seconds[3]}; wait"
    stopped = threading.Event()
    timeout = 30
    if stop == "timeout":
        timeout = 0.5
    else:
        threading.Timer(0.5, stopped.set).start()
    with pytest.raises((ToolError, KeyboardInterrupt)):
        run_command(command, timeout, stopped, platform=PROCESS_BRANCHES[platform])
    assert [still_running_after_a_moment(length) for length in seconds] == [False] * 4


@needs_setsid
@pytest.mark.parametrize("platform", ["linux", "macos"])
def test_a_stopped_command_ends_what_left_its_tree_without_the_tag(platform):
    """`env -i` drops the tag from a process's environment, as macOS hides the environment of
    Apple's own programs (/bin/sleep; psutil #2084): such a process is still found, in the
    command's session (nohup, a double fork) or, having left it (setsid), because it was seen
    below the command while it ran. (Windows has no sessions: there a process that empties its
    own environment and leaves by a double fork is not found; Windows' own programs do not.)"""
    seconds = [unique_seconds() for _ in range(3)]
    # the setsid one's parent ends before the timeout: it was seen below the command, and no more
    command = (f"(setsid env -i sleep {seconds[0]} & sleep 0.4) & nohup env -i sleep "
               f"{seconds[1]} >/dev/null 2>&1 & (env -i sleep {seconds[2]} &); sleep 30")
    with pytest.raises(ToolError, match="timed out"):
        run_command(command, 0.8, threading.Event(), platform=PROCESS_BRANCHES[platform])
    assert [still_running_after_a_moment(length) for length in seconds] == [False] * 3


def test_a_session_whose_id_another_process_has_now_is_left_alone():
    """A session outlives its first process while others remain in it; once it has none, its
    id may be given to a new process: then it is no longer the command's."""
    leader = subprocess.Popen(["sleep", unique_seconds()], start_new_session=True)
    try:
        started = psutil.Process(leader.pid).create_time()
        assert in_sessions([(leader.pid, started)]) == [psutil.Process(leader.pid)]
        assert in_sessions([(leader.pid, started - 1)]) == []
    finally:
        leader.kill()
        leader.wait()


@posix_shell
@pytest.mark.parametrize("stop", ["output", "timeout"])
def test_a_pipeline_of_programs_is_bounded_and_stopped_whole(stop):
    """run_pipeline(), the read-only shell's: programs joined by pipes made here, no shell. What
    writes too much, or runs too long, is stopped with every program of the pipeline."""
    marker = unique_seconds()
    stages = [["yes", marker], ["cat"]]
    if stop == "timeout":
        stages = [["sleep", marker], ["cat"]]
    with pytest.raises(ToolError) as stopped:
        run_pipeline(stages, 0.5, threading.Event(), output_limit=10_000)
    said = {"output": "stopped after writing more than 10,000 bytes. Output so far:\n" + marker,
            "timeout": "timed out after 0.5 s and was stopped. Output so far:\n"}
    assert str(stopped.value).startswith(said[stop])
    assert not still_running_after_a_moment(marker)


def test_a_pipeline_passes_each_programs_output_to_the_next_and_gives_the_last_exit_code():
    stages = [[sys.executable, "-c", "print('b'); print('a'); print('b')"], ["sort"], ["uniq"],
              [sys.executable, "-c", "import sys; print(sys.stdin.read().split()); sys.exit(3)"]]
    assert run_pipeline(stages, 10, threading.Event()) == ("['a', 'b']", 3)


def test_without_any_shell_the_model_is_told_what_to_install():
    """Windows with neither Git for Windows nor PowerShell: not `FileNotFoundError: [WinError
    2]`, but what to install."""
    no_shell = dataclasses.replace(windows(), shell=Shell("PowerShell", "/nowhere/powershell.exe"))
    with pytest.raises(ToolError) as failed:
        run_command("echo hi", 10, threading.Event(), platform=no_shell)
    assert str(failed.value) == (
        "no shell to run the command: /nowhere/powershell.exe was not found; install Git for "
        "Windows (its bash) or PowerShell, then start the agent again")


# One agent process runs a command each branch's way (a process for each branch cost a second and
# a half of CPU, mostly importing the SDK). Linux's branch goes last: its first command makes the
# agent a subreaper, which macOS and Windows never are, so their jobs are orphaned without one.
AGENT_ORDER = ["macos", "windows", "linux"]


@needs_setsid
def test_a_background_job_outlives_its_command_but_not_the_agent():
    """A job a finished command left running goes on (a server the next command may use) until
    the agent exits; then leave() ends it, however it left the command's process group: on each
    OS's branch, and on macOS's without the tag, by the command's session."""
    assert sorted(AGENT_ORDER) == sorted(PROCESS_BRANCHES)
    seconds = {name: [unique_seconds() for _ in range(3)] for name in AGENT_ORDER}
    agent = (
        "import dataclasses, sys, threading\n"
        "from plumbing.commands import run_command\n"
        "from plumbing.platforms import Shell, linux, macos, this_platform, windows\n"
        "from plumbing.screen import Screen\n"
        "from plumbing.setup import leave\n"
    )
    for name in AGENT_ORDER:
        first, second, third = seconds[name]
        jobs = (f"setsid sleep {first} & nohup sleep {second} >/dev/null 2>&1 & "
                f"(setsid sleep {third} &); echo started {name}")
        if name == "macos":  # env -i: no tag, as Apple's own programs show none (psutil #2084)
            jobs = (f"setsid sleep {first} & nohup env -i sleep {second} >/dev/null 2>&1 & "
                    f"(env -i sleep {third} &); echo started {name}")
        agent += (
            f"platform = dataclasses.replace({name}(), shell=this_platform().shell)\n"
            f"print(run_command({jobs!r}, 10, threading.Event(), platform=platform)[0], "
            "flush=True)\n"
        )
    agent += "sys.stdin.readline()\nleave(0, Screen())\n"
    seen = {}
    with subprocess.Popen([sys.executable, "-c", agent], cwd=ROOT, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as process:
        for name in AGENT_ORDER:
            printed = process.stdout.readline()
            seen[name] = [printed, [running_within_a_moment(length) for length in seconds[name]]]
        process.communicate("exit\n", timeout=10)
    assert process.returncode == 0
    for name in AGENT_ORDER:
        seen[name].append([still_running_after_a_moment(length) for length in seconds[name]])
    assert seen == {name: [f"started {name}\n", [True] * 3, [False] * 3] for name in AGENT_ORDER}


@posix_shell
def test_output_in_the_consoles_encoding_is_read_as_such_and_nothing_ever_raises():
    """A Windows program writes in the console's code page (cp932 in Japan): what is not UTF-8
    is read in that encoding; a byte that means nothing there becomes a replacement character."""
    japanese_console = dataclasses.replace(this_platform(), output_encoding="cp932")
    sjis = "日本語".encode("cp932").hex()
    output, _ = run_command(f"printf '{hex_escapes(sjis)}'", 10, threading.Event(),
                            platform=japanese_console)
    assert output == "日本語"
    western_console = dataclasses.replace(this_platform(), output_encoding="cp1252")
    output, _ = run_command("printf 'caf\\351 \\201'", 10, threading.Event(),
                            platform=western_console)
    assert output == "café \ufffd"  # 0x81 means nothing in cp1252
    output, _ = run_command("printf 'caf\\303\\251 \\342\\224\\212'", 10, threading.Event(),
                            platform=japanese_console)
    assert output == "café ┊"  # UTF-8 first, whatever the console's encoding


def test_a_python_program_on_windows_writes_utf8_whatever_the_ansi_code_page():
    """Python writes to a pipe in the ANSI code page, not the console's (OEM) one the output is
    otherwise read with. Here a Python whose locale is not UTF-8 (LC_ALL=C, no UTF-8 mode) stands
    in for one whose ANSI code page is cp1252, and the shell is Python itself (python -c)."""
    not_utf8 = {"PATH": os.environ["PATH"], "LC_ALL": "C", "PYTHONUTF8": "0",
                "PYTHONCOERCECLOCALE": "0", "SYSTEMROOT": os.environ.get("SYSTEMROOT", "")}
    program = "import sys; print(sys.stdout.encoding.lower(), 'caf\\xe9 \\u65e5\\u672c')"
    outputs = {}
    for name, platform in {"windows": windows(), "linux": linux()}.items():
        python_as_shell = dataclasses.replace(
            platform, shell=Shell("python", sys.executable), new_process_group=0)
        outputs[name], _ = run_command(program, 10, threading.Event(), env=not_utf8,
                                       platform=python_as_shell)
    assert outputs["windows"] == "utf-8 café 日本"
    assert outputs["linux"] != outputs["windows"]  # what this stand-in shows on Windows' branch


def hex_escapes(hex_bytes: str) -> str:
    """printf's octal escapes for bytes given in hex: a POSIX printf has no \\x."""
    return "".join(f"\\{int(hex_bytes[i:i + 2], 16):03o}" for i in range(0, len(hex_bytes), 2))


@pytest.mark.skipif(sys.platform != "win32", reason="Job Objects are Windows' (kernel32)")
def test_on_windows_a_detached_process_with_an_environment_of_its_own_ends_with_its_command(
        tmp_path):
    """A double fork, Windows' way: the command's child starts a detached process with a fresh
    environment (no tag to find it by) and ends at once, so nothing below the command shows it.
    The command's Job Object holds it all the same. Runs on a Windows CPython under Wine too."""
    pid_file = tmp_path / "detached.pid"
    detached = (f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
                "time.sleep(300)")
    child = ("import os, subprocess, sys; subprocess.Popen([sys.executable, '-c', "
             f"{detached!r}], env={{'SYSTEMROOT': os.environ['SYSTEMROOT']}}, "
             "creationflags=subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP)")
    command = ("import subprocess, sys, time; "
               f"subprocess.run([sys.executable, '-c', {child!r}]); time.sleep(300)")
    stopped = threading.Event()

    def stop_once_it_runs() -> None:  # Ctrl-C, once the detached process has said who it is
        wait_while(lambda: not (pid_file.exists() and pid_file.read_text()), 240)
        stopped.set()

    threading.Thread(target=stop_once_it_runs, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        run_pipeline([[sys.executable, "-c", command]], 300, stopped)
    pid = int(pid_file.read_text())
    wait_while(lambda: psutil.pid_exists(pid), 10)
    if psutil.pid_exists(pid):
        psutil.Process(pid).kill()  # not left running by a failing test
        pytest.fail("the detached process outlived its command")
