"""One tool call as the loop of every version runs it: what the user sees, what the model reads
(each test written for a mutant of the lessons-loop targets that survived)."""

from __future__ import annotations

import pytest
from anthropic.types import ToolUseBlock

from tests.agents import VERSIONS

class SeenOnScreen:
    """The loop's screen (LoopScreen), keeping each call and result it is shown."""

    def __init__(self, ctrl_c_at: str = "") -> None:
        self.ctrl_c_at = ctrl_c_at  # the tool whose call the user stops with Ctrl-C
        self.shown = []

    def tool_call(self, name: str, tool_input: dict) -> None:
        self.shown.append(("call", name, tool_input))
        if name == self.ctrl_c_at:
            raise KeyboardInterrupt

    def tool_result(self, output: str, is_error: bool) -> None:
        self.shown.append(("result", output, is_error))


def call(name: str, tool_input: dict, number: int = 1) -> ToolUseBlock:
    return ToolUseBlock(type="tool_use", id=f"toolu_{number}", name=name, input=tool_input)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_call_is_shown_with_its_input_and_a_result_that_worked_is_no_error(
        version, make_agent, tmp_path):
    agent = make_agent()
    screen = SeenOnScreen()
    result = agent.run_tool(call("write_file", {"path": "a.txt", "content": "alpha"}),
                            agent.TOOLS, screen)
    assert screen.shown == [("call", "write_file", {"path": "a.txt", "content": "alpha"}),
                            ("result", "wrote 5 characters to a.txt", False)]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_1",
                      "content": "wrote 5 characters to a.txt", "is_error": False}
    assert screen.shown[1][2] is False and result["is_error"] is False  # a boolean, not None


@pytest.mark.parametrize("version", VERSIONS)
def test_a_tool_that_raises_names_itself_and_the_exception_and_is_marked_failed(
        version, make_agent, monkeypatch):
    agent = make_agent()

    def broken(path: str, **_) -> str:
        raise ValueError(f"no way to read {path}")

    monkeypatch.setitem(agent.TOOL_HANDLERS, "read_file", broken)
    screen = SeenOnScreen()
    result = agent.run_tool(call("read_file", {"path": "a.txt"}), agent.TOOLS, screen)
    text = "error: read_file failed: ValueError: no way to read a.txt"
    assert screen.shown[1] == ("result", text, True)
    assert result == {"type": "tool_result", "tool_use_id": "toolu_1", "content": text,
                      "is_error": True}


@pytest.mark.parametrize("version", VERSIONS)
def test_calls_a_ctrl_c_stopped_are_each_answered_as_interrupted(version, make_agent, tmp_path):
    """Three calls; Ctrl-C lands while the second runs: the first keeps its result, the second
    and third are answered as interrupted, in order, in one message."""
    agent = make_agent()
    calls = [call("write_file", {"path": "a.txt", "content": "alpha"}, 1),
             call("read_file", {"path": "a.txt"}, 2),
             call("write_file", {"path": "b.txt", "content": "beta"}, 3)]
    messages = []
    with pytest.raises(KeyboardInterrupt):
        agent.answer_tool_calls(messages, calls, agent.TOOLS, SeenOnScreen(ctrl_c_at="read_file"))
    interrupted = "error: interrupted by the user before this call finished"
    assert messages == [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1",
         "content": "wrote 5 characters to a.txt", "is_error": False},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": interrupted,
         "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_3", "content": interrupted,
         "is_error": True}]}]
    assert not (tmp_path / "b.txt").exists()
