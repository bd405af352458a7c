"""plumbing/commands.py beyond tests/test_plumbing_commands.py: what the mutation run of the
commands target (and a hang of test_plumbing_sandbox.py on a loaded machine) found no test for.
Each test runs at most one short command, or none: the functions that find and end processes
are called on a `sleep` this test starts itself, found by a length no other process has."""

import os
import threading
import uuid

import psutil
import pytest

from plumbing import commands
from plumbing.commands import run_pipeline

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
