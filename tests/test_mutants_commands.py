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
from types import SimpleNamespace

import psutil
import pytest

from plumbing import commands
from plumbing.commands import run_pipeline
from plumbing.platforms import linux, macos, windows

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


# -- the guard as data: each prctl(2) call, as the kernel gets it (issue 41: guards asserted where
# they are built). The real process test above shows the state they leave; this one, the calls
# themselves, which it cannot tell apart: Linux ignores prctl's unused arguments for these
# options, and the capability bounding set only shrinks, once for the whole test process.
class CLibrary:
    """The C library as guard_the_agent uses it: each prctl call's arguments, recorded."""

    def __init__(self) -> None:
        self.calls = []

    def prctl(self, *arguments) -> int:
        self.calls.append(arguments)
        return 0


def test_on_linux_the_guard_makes_the_agent_a_subreaper_undumpable_and_drops_ptrace(
        monkeypatch):
    """The numbers from <linux/prctl.h> and <linux/capability.h>, written out: a constant
    changed in commands.py fails here too. Every unused argument 0, as prctl(2) asks."""
    c_library = CLibrary()
    monkeypatch.setattr(commands, "libc", lambda: c_library)
    commands.guard_the_agent(linux())
    pr_set_child_subreaper, pr_set_dumpable, pr_capbset_drop, cap_sys_ptrace = 36, 4, 24, 19
    assert c_library.calls == [(pr_set_child_subreaper, 1, 0, 0, 0), (pr_set_dumpable, 0, 0, 0, 0),
                               (pr_capbset_drop, cap_sys_ptrace, 0, 0, 0)]


@pytest.mark.parametrize("platform", [macos(), windows()], ids=["macos", "windows"])
def test_where_there_is_no_subreaper_the_guard_calls_no_prctl(monkeypatch, platform):
    c_library = CLibrary()
    monkeypatch.setattr(commands, "libc", lambda: c_library)
    commands.guard_the_agent(platform)
    assert c_library.calls == []


def test_without_a_c_library_the_guard_does_nothing_and_raises_nothing(monkeypatch):
    monkeypatch.setattr(commands, "libc", lambda: None)
    assert commands.guard_the_agent(linux()) is None


# -- the clock's edges: time.monotonic() as the test sets it, and a command as the loop sees it,
# so that "exactly at the deadline" is a moment the test chooses, not one it hopes to meet --
class Clock:
    """commands.time with a monotonic() that stands still until the test moves it."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


class Command:
    """A started command as wait_or_stop sees it (wait, poll): it ends when the test says."""

    def __init__(self) -> None:
        self.ended = threading.Event()
        self.ended_by_the_agent = False

    def wait(self) -> int:
        self.ended.wait(30)  # a failing test does not hang for ever
        return 0

    def poll(self) -> int | None:
        return 0 if self.ended.is_set() else None


class Looks:
    """The command's output file, as wait_or_stop looks at it (its size, once a look): at the
    end of look n the clock moves to `times[n]`; after the last, the command ends by itself."""

    def __init__(self, clock: Clock, command: Command, times: list[float]) -> None:
        self.clock, self.command, self.times = clock, command, times
        self.file = tempfile.TemporaryFile()
        self.count = 0

    def fileno(self) -> int:
        if self.count < len(self.times):
            self.clock.now = self.times[self.count]
        else:
            self.command.ended.set()
        self.count += 1
        return self.file.fileno()


def wait_with_the_clock(monkeypatch, times: list[float], timeout: float = 5):
    """wait_or_stop on a command that ends after len(times) + 1 looks, the clock standing at 1000
    for the first look and at times[n] for the next ones: (why it was stopped, the clock at each
    note of what runs below the command, whether the agent ended the command)."""
    clock, command, notes = Clock(), Command(), []
    looks = Looks(clock, command, times)

    def end_command(processes: list, tag: str, seen: dict) -> None:
        command.ended_by_the_agent = True
        command.ended.set()

    monkeypatch.setattr(commands, "time", clock)
    monkeypatch.setattr(commands, "note_descendants", lambda processes, seen:
                        notes.append(clock.now))
    monkeypatch.setattr(commands, "end_command", end_command)
    with looks.file:
        why_stopped = commands.wait_or_stop([command], looks, timeout, threading.Event(), 100,
                                            "tag", linux())
    return why_stopped, notes, command.ended_by_the_agent


def test_a_command_that_ends_at_exactly_its_deadline_is_not_stopped(monkeypatch):
    assert wait_with_the_clock(monkeypatch, [1005.0, 1005.0]) == ("", [1005.0], False)


def test_a_command_still_running_a_moment_past_its_deadline_is_stopped(monkeypatch):
    assert wait_with_the_clock(monkeypatch, [1005.001]) == (
        "timed out after 5 s and was stopped", [1005.001], True)


def test_what_runs_below_a_command_is_noted_once_each_note_pause_not_at_each_look(monkeypatch):
    """Not at the start, not at exactly NOTE_PAUSE after it: at the first look past it; and then
    not at the next look, which comes before another NOTE_PAUSE has passed."""
    start, pause = 1000.0, commands.NOTE_PAUSE
    why_stopped, notes, _ = wait_with_the_clock(
        monkeypatch, [start + pause, start + pause + 0.01, start + pause + 0.02])
    assert (why_stopped, notes) == ("", [start + pause + 0.01])


def test_a_running_command_is_looked_at_soon_at_first_then_every_longest_pause(monkeypatch):
    """Most commands end within milliseconds: the first looks come after 1, 2, 4, 8 and 16 ms;
    a long command is then looked at every LONGEST_PAUSE (20 ms), which costs no CPU."""
    pauses = []

    class Waiter(threading.Thread):
        def join(self, timeout: float | None = None) -> None:
            pauses.append(timeout)
            super().join(timeout)

    monkeypatch.setattr(commands, "threading", SimpleNamespace(Thread=Waiter))
    assert wait_with_the_clock(monkeypatch, [1000.0] * 6) == ("", [], False)
    assert pauses[:7] == pytest.approx([0.001, 0.002, 0.004, 0.008, 0.016, 0.02, 0.02])


class Ending:
    """A killed process as end_processes and collect see it (psutil.Process): a stand-in, so
    that the clock can stand where the test puts it while it is killed and waited for."""

    def __init__(self, pid: int, statuses: list, clock: Clock | None = None,
                 kill_takes: float = 0) -> None:
        self.pid, self.statuses, self.clock, self.kill_takes = pid, statuses, clock, kill_takes
        self.killed = False

    def kill(self) -> None:
        self.killed = True
        self.clock.now += self.kill_takes

    def status(self) -> str:
        status = self.statuses[0] if len(self.statuses) == 1 else self.statuses.pop(0)
        if status is psutil.NoSuchProcess:
            raise psutil.NoSuchProcess(self.pid)
        return status

    def ppid(self) -> int:
        return os.getppid()  # another process's child: a zombie is its parent's to collect


def test_ending_a_tree_stops_looking_for_more_once_its_time_is_up(monkeypatch):
    """The kills of the first look take exactly END_WAIT: no look comes after them, though the
    command started another process meanwhile (a tree that keeps growing is ended within
    END_WAIT, not chased for ever)."""
    clock = Clock()
    monkeypatch.setattr(commands, "time", clock)
    first = Ending(1, [psutil.STATUS_RUNNING], clock, kill_takes=commands.END_WAIT)
    second = Ending(2, [psutil.STATUS_RUNNING], clock)
    looks = []

    def find() -> list:
        looks.append(clock.now)
        return [first] if len(looks) == 1 else [first, second]

    commands.end_processes(find)
    assert (looks, first.killed, second.killed) == ([1000.0], True, False)


def rounds_of_collect(monkeypatch, processes: list, deadline: float) -> tuple[list, float]:
    """collect() with psutil's wait finding none gone (as for another's child) and taking its
    whole timeout: the clock at each round's start, and at the end."""
    clock, rounds = Clock(), []
    for process in processes:
        process.clock = clock

    def wait_procs(waited: list, timeout: float) -> tuple[list, list]:
        assert len(rounds) < 1000, "collect() still waits at its thousandth round"
        rounds.append(clock.now)
        clock.now += timeout
        return [], list(waited)

    monkeypatch.setattr(commands, "time", clock)
    monkeypatch.setattr(commands.psutil, "wait_procs", wait_procs)
    commands.collect(processes, deadline)
    return rounds, clock.now


def test_a_killed_process_of_another_parent_is_waited_for_until_it_is_dead(monkeypatch):
    """Still running at the end of the first two rounds after its kill, a zombie (its own
    parent's to collect) at the third's: the agent waits those three rounds, then no more."""
    statuses = [psutil.STATUS_RUNNING, psutil.STATUS_RUNNING, psutil.STATUS_ZOMBIE]
    rounds, _ = rounds_of_collect(monkeypatch, [Ending(1, statuses)], deadline=1002.0)
    assert rounds == pytest.approx([1000.0, 1000.005, 1000.01])


def test_a_killed_process_gone_meanwhile_is_not_waited_for(monkeypatch):
    rounds, _ = rounds_of_collect(monkeypatch, [Ending(1, [psutil.NoSuchProcess])],
                                  deadline=1002.0)
    assert rounds == [1000.0]


def test_waiting_for_killed_processes_ends_within_a_short_round_of_its_deadline(monkeypatch):
    """A killed process that never dies (stuck in the kernel, say) holds the agent up to the
    deadline, then at most one round of 5 ms past it."""
    rounds, end = rounds_of_collect(monkeypatch, [Ending(1, [psutil.STATUS_RUNNING])],
                                    deadline=1000.012)
    assert rounds == pytest.approx([1000.0, 1000.005, 1000.01])
    assert end == pytest.approx(1000.015)


def test_with_the_clock_at_the_deadline_killed_processes_are_not_waited_for(monkeypatch):
    rounds, _ = rounds_of_collect(monkeypatch, [Ending(1, [psutil.STATUS_RUNNING])],
                                  deadline=1000.0)
    assert rounds == []
