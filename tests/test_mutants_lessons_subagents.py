"""The subagents of v3 to v6 at a Ctrl-C, as the user and the files see it (each test written for a
mutant of the lessons-subagents target that survived)."""

from __future__ import annotations

import sys
import threading

import pytest

from tests.agents import press_ctrl_c_once, versions_from
from tests.test_subagents import task

def code_task(number: int) -> dict:
    """A Task call for a code subagent that would write the file {number}.txt."""
    return task(f"CHILD-{number}: write {number}.", "code", f"job {number}")


def writes_its_file(number: int, hold: bool) -> dict:
    """The track of that subagent: it writes its file, then reports."""
    write = {"name": "write_file", "input": {"path": f"{number}.txt", "content": "x"}}
    return {"match": f"CHILD-{number}:", "turns": [
        {"hold": hold, "tool_calls": [write]}, {"text": "Wrote it."}]}


@pytest.mark.parametrize("version", versions_from("v3"))
@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.allow_leftover_turns  # what the stopped subagents, and the one never started, had left
@pytest.mark.usefixtures("ctrl_c_raises")
def test_a_task_call_still_waiting_for_a_place_at_ctrl_c_never_starts(
    version, scripted_api, agent, tmp_path, capsys
):
    """PARALLEL_SUBAGENTS run, one call more waits for a place; Ctrl-C comes while the running
    ones wait for the model. The waiting one is cancelled: once the running ones have stopped,
    no thread takes it up, so it sends no request, shows no status line and writes no file."""
    running = agent.PARALLEL_SUBAGENTS
    numbers = range(1, running + 2)  # the last one waits for a place
    scripted_api.play({
        "turns": [{"tool_calls": [code_task(number) for number in numbers]}],
        "tracks": [writes_its_file(number, hold=number <= running) for number in numbers],
    })
    press_ctrl_c_once(lambda: len(scripted_api.requests) == 1 + running)
    threads_before = set(threading.enumerate())
    history = []
    assert agent.run_turn(history, "write five files") == 130
    pool = [thread for thread in threading.enumerate() if thread not in threads_before
            and thread.name.startswith("ThreadPoolExecutor")]
    assert len(pool) == running  # each still waits for its model's reply
    assert [result["content"] for result in history[-1]["content"]] == [
        "error: interrupted by the user before this call finished"] * len(numbers)
    scripted_api.release()  # the running ones get their replies and stop there
    for thread in pool:  # a thread ends only when no call is left for it to take up
        thread.join(30)
        assert not thread.is_alive()
    assert sorted(request.track for request in scripted_api.requests[1:]) == [
        f"CHILD-{number}:" for number in range(1, running + 1)]
    assert not list(tmp_path.glob("*.txt"))
    out = capsys.readouterr().out
    assert f"job {running} … started" in out and f"job {running + 1}" not in out
