"""plumbing/commands.py beyond tests/test_plumbing_commands.py: what the mutation run of the
commands target (and a hang of test_plumbing_sandbox.py on a loaded machine) found no test for.
Each test runs at most one short command, or none: the functions that find and end processes
are called on a `sleep` this test starts itself, found by a length no other process has."""

import ctypes
import os
import subprocess
import sys
import tempfile
import threading
import uuid

import psutil
import pytest

from plumbing import commands
from plumbing.commands import run_pipeline
from plumbing.platforms import linux, macos

posix = pytest.mark.skipif(os.name != "posix", reason="runs POSIX programs (sleep)")


def unique_seconds() -> str:
    return f"{2000 + uuid.uuid4().int % 10**6}.{os.getpid()}"


def sleeping(seconds: str) -> list:
    """The `sleep <seconds>` processes that run (not zombies)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.cmdline()[-1:] == [seconds] and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except (psutil.Error, IndexError):  # ended meanwhile, or another user's
            continue
    return found


def within(seconds: float, call, *args):
    """call(*args) in a thread, and what it raised; a call still running after `seconds` fails
    the test (the bug it looks for is a wait that never ends)."""
    raised = []

    def run() -> None:
        try:
            call(*args)
        except BaseException as error:  # noqa: BLE001 - what the call raised is the result
            raised.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return thread.is_alive(), raised


@posix
def test_a_stopped_command_is_killed_even_when_finding_its_processes_outlasts_the_wait(
        monkeypatch):
    """On a loaded machine the first look for a command's processes (every process's
    environment read) can take longer than END_WAIT. What it found is killed all the same: before,
    nothing was, and the agent waited for the command for ever (test_plumbing_sandbox.py hung so,
    on `cat` reading a FIFO, at a load of 80 on two cores). END_WAIT 0 plays that look."""
    monkeypatch.setattr(commands, "END_WAIT", 0)
    seconds = unique_seconds()
    stopped = threading.Event()
    stopped.set()  # Ctrl-C at once: the command is ended at the first look
    try:
        hung, raised = within(10, run_pipeline, [["sleep", seconds]], 30, stopped)
        assert not hung, "the agent still waits for a command it never killed"
        assert [type(error) for error in raised] == [KeyboardInterrupt]
        assert sleeping(seconds) == []
    finally:
        for process in sleeping(seconds):  # not left running by a failing test
            process.kill()


def not_left(processes: list) -> list[bool]:
    """For each process this test started: whether it still exists, running or as a zombie that
    no one collected."""
    return [psutil.pid_exists(process.pid) for process in processes]


def end_all(processes: list) -> None:
    """What a failing test leaves: killed and collected."""
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()


@posix
def test_a_process_seen_only_at_the_second_look_is_killed_too_and_each_one_collected(
        monkeypatch):
    """A process may start another before it is killed: the look after the kills finds it. Each
    killed child of the agent is collected (no zombie left), and as soon as it is: END_WAIT, made
    long here, is a limit, not a wait."""
    monkeypatch.setattr(commands, "END_WAIT", 15)
    started = []

    def find() -> list:
        if not started:  # two run by the first look, which sees one
            started.extend(subprocess.Popen(["sleep", unique_seconds()]) for _ in range(2))
            return [psutil.Process(started[0].pid)]
        return [psutil.Process(process.pid) for process in started]

    try:
        hung, raised = within(5, commands.end_processes, find)
        assert (hung, raised) == (False, [])
        assert not_left(started) == [False, False]
    finally:
        end_all(started)


@posix
def test_a_killed_process_that_its_own_parent_never_collects_does_not_hold_the_agent_up(
        monkeypatch):
    """A command's process whose parent (not the agent) never waits for it stays a zombie once
    killed: the agent cannot collect it, and goes on at once."""
    monkeypatch.setattr(commands, "END_WAIT", 15)
    # a Python parent, not a shell: a shell may still collect its child before its own `exec`
    # (CI saw that once, the killed child gone instead of a zombie)
    parent = subprocess.Popen([sys.executable, "-c", "import subprocess, time; "
                               f"child = subprocess.Popen(['sleep', '{unique_seconds()}']); "
                               "print(child.pid, flush=True); time.sleep(3600)"],
                              stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    try:
        hung, raised = within(5, commands.end_processes, lambda: [psutil.Process(child)])
        assert (hung, raised) == (False, [])
        assert psutil.Process(child).status() == psutil.STATUS_ZOMBIE
    finally:
        end_all([parent])
        parent.stdout.close()
        try:  # the zombie comes to the agent where it is a subreaper
            os.waitpid(child, 0)
        except ChildProcessError:
            pass


@pytest.fixture
def agent_processes(tmp_path, monkeypatch):
    """What the agent's exit ends, each found one way only: a child below the agent (the only
    one of pytest's children that process_tree shows here, so that no other test's process is
    ended), a process with this agent's tag, and one in a session the agent noted."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the sessions file is
    below = subprocess.Popen(["sleep", unique_seconds()])
    tagged = subprocess.Popen(["sleep", unique_seconds()],
                              env={**os.environ, commands.COMMAND_TAG: commands.agent_tag() + "/1"})
    in_session = subprocess.Popen(["sleep", unique_seconds()], start_new_session=True)
    whole_tree = commands.process_tree

    def only_below(pid: int) -> list:
        return [process for process in whole_tree(pid) if process.pid in (os.getpid(), below.pid)]

    monkeypatch.setattr(commands, "process_tree", only_below)
    started = [below, tagged, in_session]
    yield started
    end_all(started)


@posix
def test_on_exit_what_is_below_the_agent_carries_its_tag_or_is_in_a_noted_session_ends(
        agent_processes):
    session = agent_processes[2]
    created = psutil.Process(session.pid).create_time()
    commands.sessions_file().write_text(f"{session.pid} {created!r}\n", encoding="ascii")
    commands.end_every_process_started()
    assert not_left(agent_processes) == [False, False, False]
    assert not commands.sessions_file().exists()


@posix
def test_on_exit_without_a_noted_session_the_rest_still_ends(agent_processes):
    commands.end_every_process_started()
    assert not_left(agent_processes[:2]) == [False, False]
    assert not_left(agent_processes[2:]) == [True]  # noted nowhere: not the agent's to end


@posix
def test_output_of_exactly_the_limit_is_no_runaway():
    """Stopped after writing *more than* the limit: ten bytes with a limit of ten are the whole
    output, while the command runs on a moment after writing them."""
    stages = [["sh", "-c", "printf 0123456789; exec sleep 0.2"]]
    assert run_pipeline(stages, 10, threading.Event(), output_limit=10) == ("0123456789", 0)


PR_GET_DUMPABLE = 3
PR_GET_CHILD_SUBREAPER = 37
linux_only = pytest.mark.skipif(sys.platform != "linux", reason="prctl is Linux's")


def agent_state() -> tuple[int, int]:
    """This process as prctl(2) reads it: (a subreaper?, dumpable?)."""
    c_library = ctypes.CDLL(None, use_errno=True)
    subreaper = ctypes.c_int(-1)
    c_library.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(subreaper), 0, 0, 0)
    return subreaper.value, c_library.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)


def set_state(subreaper: int, dumpable: int) -> None:
    c_library = ctypes.CDLL(None, use_errno=True)
    c_library.prctl(commands.PR_SET_CHILD_SUBREAPER, subreaper, 0, 0, 0)
    c_library.prctl(commands.PR_SET_DUMPABLE, dumpable, 0, 0, 0)


@linux_only
def test_on_linux_the_agent_adopts_its_commands_orphans_and_cannot_be_read_by_them():
    """From the state a new process starts in (no subreaper, dumpable), as the agent is before
    its first command. macOS's branch changes neither (it has no prctl)."""
    try:
        set_state(subreaper=0, dumpable=1)
        commands.guard_the_agent(macos())
        assert agent_state() == (0, 1)
        commands.guard_the_agent(linux())
        assert agent_state() == (1, 0)
    finally:
        set_state(subreaper=1, dumpable=0)  # as the first command left it
