"""The rules of the plumbing that decide what the model reads: the cut of a long result, the
last words of a failed subagent, a tool call's errors, the call budget of a turn, the history that
stays valid when a turn stops, and the blocklist of destructive commands.

Fixtures tell things apart: a cut whose head, middle and tail hold different numbers of lines;
subagents that said different things in turn; blank text as whitespace, not only ""; two calls,
not one; each limit tried at its edge and one past it.
"""

from __future__ import annotations

import dataclasses

import anthropic
import pytest
from anthropic.types import TextBlock, ThinkingBlock, ToolUseBlock

from plumbing.budget import NOTE_ROOM, ROOM_NOTE, clip, cut_short, make_room
from plumbing.checks import ERROR_BUDGET, ToolError, check_tool_call, tool_error_text
from plumbing.commands import blocklist_spelling, refuse_if_blocked
from plumbing.platforms import Shell, linux, this_platform, windows
from plumbing.replies import (
    AgentStopped,
    Refused,
    add_user_message,
    blocks_to_keep,
    copy_history,
    final_answer,
    reply_text,
    stop_incomplete_turn,
    tool_results_were_last,
)
from plumbing.setup import explain_api_error
from plumbing.subagents import last_message, subagent_failed, within_budget
from plumbing.turns import CallBudget
from tests.agents import load_agent

def said(words: str) -> TextBlock:
    return TextBlock(type="text", text=words)


def thought(notes: str, signature: str = "sig") -> ThinkingBlock:
    return ThinkingBlock(type="thinking", thinking=notes, signature=signature)


def tool_call(id_: str, name: str = "bash", **given) -> ToolUseBlock:
    return ToolUseBlock(type="tool_use", id=id_, name=name, input=given)


def reply(*blocks) -> dict:
    return {"role": "assistant", "content": list(blocks)}


def result(id_: str, content: str = "ok") -> dict:
    return {"type": "tool_result", "tool_use_id": id_, "content": content}


# -- budget.py: the cut of a long result, and the note that says what was cut --
NARROWING = {"bash": "grep, head, tail or sed -n ...", "sh": "grep, head, tail or sed -n ...",
             "PowerShell": "Select-String, or Select-Object -First, -Last or -Skip ..."}
NOTE = ("\n\n[... {cut} of {whole} characters ({lines} lines) cut here to fit the context budget. "
        "Ask for less at a time: read_file with offset and limit, or narrow the command with "
        + NARROWING[this_platform().shell.name].replace("{", "{{") + "]\n\n")


def test_the_cut_note_names_what_narrows_a_command_in_the_bash_tool_s_shell():
    """PowerShell (a Windows without Git for Windows) has no grep, head, tail or sed."""
    powershell = dataclasses.replace(windows(), shell=Shell("PowerShell", "powershell.exe"))
    git_bash = dataclasses.replace(windows(), shell=Shell("bash", r"C:\Git\bin\bash.exe"))
    text = "x" * 1_001
    for platform in (powershell, git_bash, linux()):
        note = clip(text, 1_000, platform).strip("x")
        assert note.endswith(f"narrow the command with {NARROWING[platform.shell.name]}]\n\n")


def test_the_cut_note_counts_the_lines_of_the_cut_not_of_the_whole_text():
    """Head, cut and tail have different numbers of lines, so a count of the wrong part shows."""
    text = "".join(f"line {number:04}\n" for number in range(500))  # 500 lines of 10 characters
    budget = NOTE_ROOM + 600  # keeps 400 characters of head (40 lines) and 200 of tail (20)
    cut = clip(text, budget)
    note = NOTE.format(cut="4,400", whole="5,000", lines="440")
    assert cut == text[:400] + note + text[-200:]
    assert cut.startswith("line 0000\n") and cut.endswith("line 0499\n")


def test_a_text_at_the_budget_is_kept_whole_and_one_character_more_is_cut():
    text = "x" * 1_000
    assert clip(text, 1_000) == text
    cut = clip(text + "y", 1_000)
    assert NOTE.format(cut="401", whole="1,001", lines="0") in cut
    assert cut.startswith("x" * 400) and cut.endswith("x" * 199 + "y")


def test_a_budget_below_the_note_keeps_only_the_note():
    assert clip("ab\ncd\n", 3) == NOTE.format(cut="6", whole="6", lines="2")


def test_a_quoted_value_is_cut_short_with_an_ellipsis_at_its_limit():
    assert cut_short("abcdef", 6) == "abcdef"
    assert cut_short("abcdefg", 6) == "abcde…"
    assert len(cut_short("x" * 500, 200)) == 200


def test_room_is_made_from_the_older_half_of_the_tool_results():
    messages = [
        {"role": "user", "content": "Look at the project."},
        reply(tool_call("toolu_1"), tool_call("toolu_2")),
        {"role": "user", "content": [result("toolu_1", "first"),
                                     {**result("toolu_2", "second"), "is_error": True},
                                     {"type": "text", "text": "Go on."}]},
        reply(tool_call("toolu_3")),
        {"role": "user", "content": [result("toolu_3", "third")]},
    ]
    earlier = messages[2]["content"][0]
    assert make_room(messages) == 2  # of 3, rounded up
    first, second, _ = messages[2]["content"]
    assert (first["content"], second["content"]) == (ROOM_NOTE, ROOM_NOTE)
    assert second["is_error"] and second["tool_use_id"] == "toolu_2"
    assert messages[4]["content"][0]["content"] == "third"
    assert earlier["content"] == "first"  # a new block: a copy of the history is not changed
    assert make_room(messages) == 1  # the one full result left
    assert messages[4]["content"][0]["content"] == ROOM_NOTE
    assert make_room(messages) == 0


# -- subagents.py: what the main agent reads when a subagent stops --


def test_a_failed_subagent_hands_back_its_last_message_not_its_first():
    """Three things said (the second is not the last either), then blank text."""
    messages = [
        {"role": "user", "content": "Find the auth code."},
        reply(said("First I list src/."), tool_call("toolu_1")),
        {"role": "user", "content": [result("toolu_1")]},
        reply(said("Then I grep for login."), tool_call("toolu_9")),
        {"role": "user", "content": [result("toolu_9")]},
        reply(thought("It is in auth.py, line 12."), said(" \n"), tool_call("toolu_2")),
        {"role": "user", "content": [result("toolu_2")]},
        reply(said("")),
    ]
    error = subagent_failed("explore", AgentStopped("no final answer within the round cap"),
                            messages, 3_000)
    assert isinstance(error, ToolError)
    assert str(error) == (
        "the explore subagent stopped without a report: no final answer within the round cap."
        "\nIts last message:\nIt is in auth.py, line 12.\nTry again with a smaller task, or do "
        "it yourself."
    )


def test_a_subagent_that_said_nothing_hands_back_no_last_message():
    messages = [{"role": "user", "content": "Find it."}, reply(said("\t"), tool_call("toolu_1"))]
    assert last_message(messages, 100) == ""
    assert "Its last message" not in str(subagent_failed("plan", ValueError("x"), messages, 100))


@pytest.mark.allow_violations  # the scripted 400 is the point
def test_an_api_error_is_explained_the_way_the_user_reads_it(scripted_api):
    scripted_api.play({"turns": [{"error": {"status": 400, "message": "prompt is too long"}}]})
    client = anthropic.Anthropic(base_url=scripted_api.start(), api_key="k")
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model="claude-sonnet-5-5", max_tokens=10,
                               messages=[{"role": "user", "content": "Hi."}])
    error = str(subagent_failed("explore", raised.value, [], 100))
    assert error == (f"the explore subagent stopped without a report: "
                     f"{explain_api_error(raised.value)}.\nTry again with a smaller task, or do it "
                     "yourself.")
    assert "prompt is too long" in error


def test_a_last_message_over_its_budget_is_cut_and_says_so():
    messages = [reply(said("a" * 200)), reply(said("b" * 201))]
    assert last_message(messages, 201) == "\nIts last message:\n" + "b" * 201
    mark = "…\n[cut here: 201 characters in all]"
    assert last_message(messages, 200) == "\nIts last message:\n" + "b" * (200 - len(mark)) + mark


def test_a_finished_report_is_held_to_its_budget_at_the_edge():
    assert within_budget("r" * 3_000, 3_000) == "r" * 3_000
    cut = within_budget("r" * 3_001, 3_000)
    assert len(cut) == 3_000
    assert cut == "r" * (3_000 - 37) + "…\n[cut here: 3,001 characters in all]"


# -- checks.py: a wrong tool call is an error the model can read --
TOOLS = [
    {"name": "bash", "input_schema": {
        "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
    {"name": "read_file", "input_schema": {
        "type": "object", "properties": {"path": {"type": "string"},
                                         "lines": {"type": "array", "items": {"type": "integer"}}},
        "required": ["path"]}},
]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (tool_call("t", "write_file", path="a"),
         "unknown tool 'write_file'; the tools you have are: bash, read_file"),
        (tool_call("t", "bash", command=5), "invalid input for bash (command): 5 is not of type "
                                            "'string'"),
        (tool_call("t", "bash"), "invalid input for bash (input): 'command' is a required "
                                 "property"),
        (tool_call("t", "read_file", path="a", lines=[1, "two"]),
         "invalid input for read_file (lines/1): 'two' is not of type 'integer'"),
    ],
    ids=["unknown tool", "wrong type", "missing field", "second item of a list"],
)
def test_a_wrong_tool_call_says_what_is_wrong_and_where(call, message):
    with pytest.raises(ToolError) as raised:
        check_tool_call(call, TOOLS)
    assert str(raised.value) == message


def test_a_right_tool_call_passes():
    check_tool_call(tool_call("t", "read_file", path="a", lines=[1, 2]), TOOLS)


def test_a_huge_value_is_not_echoed_back_into_the_context():
    schema = {"type": "object", "properties": {"mode": {"enum": ["x" * 400, "short"]}}}
    with pytest.raises(ToolError) as raised:
        check_tool_call(tool_call("t", "pick", mode="y" * 5_000), [{"name": "pick",
                                                                    "input_schema": schema}])
    message = str(raised.value)
    assert message.startswith("invalid input for pick (mode): breaks the rule enum: ['xxx")
    assert len(message) < 300 and message.endswith("…")


@pytest.mark.parametrize(("length", "verbatim"), [(299, True), (300, False)])
def test_a_validator_message_of_300_characters_or_more_is_not_echoed(length, verbatim):
    value = "a" * (length - len(" is not of type 'integer'") - 2)  # its repr adds two quotes
    message = f"{value!r} is not of type 'integer'"
    assert len(message) == length
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}}
    with pytest.raises(ToolError) as raised:
        check_tool_call(tool_call("t", "tally", count=value), [{"name": "tally",
                                                              "input_schema": schema}])
    shown = message if verbatim else "breaks the rule type: 'integer'"
    assert str(raised.value) == f"invalid input for tally (count): {shown}"


def test_the_place_and_the_rule_are_cut_at_200_characters():
    name = "p" * 300
    schema = {"type": "object", "properties": {name: {"enum": ["x" * 400]}}}
    with pytest.raises(ToolError) as raised:
        check_tool_call(tool_call("t", "pick", **{name: "y"}), [{"name": "pick",
                                                                "input_schema": schema}])
    rule = repr(["x" * 400])[:199] + "…"
    place = "p" * 199 + "…"
    assert str(raised.value) == f"invalid input for pick ({place}): breaks the rule enum: {rule}"


def test_input_nested_too_deeply_to_check_is_an_error_not_a_crash():
    schema = {"type": "object", "properties": {"a": {"$ref": "#"}}}
    nested = {}
    for _ in range(5_000):
        nested = {"a": nested}
    with pytest.raises(ToolError) as raised:
        check_tool_call(tool_call("t", "deep", **nested),
                        [{"name": "deep", "input_schema": schema}])
    assert str(raised.value) == "invalid input for deep: nested too deeply to check"


def test_a_tool_error_is_what_the_model_reads_cut_to_its_budget():
    assert tool_error_text("bash", ToolError("no such file: a.py")) == "error: no such file: a.py"
    assert tool_error_text("bash", ValueError("bad")) == "error: bash failed: ValueError: bad"
    whole = "e" * (ERROR_BUDGET - len("error: "))
    assert tool_error_text("bash", ToolError(whole)) == "error: " + whole
    long = tool_error_text("bash", ToolError(whole + "e"))
    assert len(long) < ERROR_BUDGET and long.startswith("error: eee") and "cut here" in long


# -- turns.py: the model calls of one turn --


def test_a_new_turn_has_its_whole_budget_again():
    calls = CallBudget(2)
    calls.spend()
    calls.spend()
    calls.start_turn()
    calls.spend()
    calls.spend()
    with pytest.raises(AgentStopped, match="made its 2 model calls"):
        calls.spend()


def test_a_budget_of_no_calls_stops_the_first():
    with pytest.raises(AgentStopped):
        CallBudget(0).spend()


# -- replies.py: a history the API takes back, whatever stopped the turn --


def test_blank_text_and_unsigned_thinking_are_left_out_of_the_history():
    content = [thought("Plan.", "sig-1"), said(""), said(" \n\t"), said("Listing."),
               thought("Cut short.", ""), tool_call("toolu_1"), said("Then this.")]
    kept = blocks_to_keep(content)
    assert kept == [content[0], content[3], content[5], content[6]]


def test_the_reply_text_joins_only_the_text_blocks():
    message = anthropic.types.Message(
        id="m", type="message", role="assistant", model="x", stop_reason="end_turn",
        stop_sequence=None, usage={"input_tokens": 1, "output_tokens": 1},
        content=[said("One. "), thought("not this"), said("Two.")])
    assert reply_text(message) == "One. Two."
    assert final_answer(message, [{"role": "user", "content": [result("t")]}]) == "One. Two."


@pytest.mark.parametrize("words", ["", " \n"], ids=["empty", "whitespace"])
def test_an_empty_reply_after_tool_results_is_no_answer(words):
    message = anthropic.types.Message(
        id="m", type="message", role="assistant", model="x", stop_reason="end_turn",
        stop_sequence=None, usage={"input_tokens": 1, "output_tokens": 1}, content=[said(words)])
    after_results = [{"role": "user", "content": [result("t")]}]
    with pytest.raises(AgentStopped) as raised:
        final_answer(message, after_results)
    assert str(raised.value) == ("the model ended its turn with an empty reply after the tool "
                                 "results")
    after_a_question = [{"role": "user", "content": [{"type": "text", "text": "Hi."}]}]
    assert final_answer(message, after_a_question) == words


def test_only_the_last_user_message_says_whether_tool_results_were_last():
    earlier = [{"role": "user", "content": [result("t")]}, reply(said("Done.")),
               {"role": "user", "content": [{"type": "text", "text": "Thanks."}]}]
    assert not tool_results_were_last(earlier)
    assert tool_results_were_last(earlier[:1] + [reply(said("x"))])
    assert not tool_results_were_last([])


def test_each_call_of_a_cut_off_reply_is_answered_in_order_and_the_turn_stops():
    messages = [{"role": "user", "content": "Do it."}]
    calls = [tool_call("toolu_1"), tool_call("toolu_2")]
    with pytest.raises(AgentStopped) as raised:
        stop_incomplete_turn(messages, calls, "max_tokens")
    assert str(raised.value) == ("the reply was cut short at max_tokens (MAX_TOKENS): what it "
                                 "says is incomplete")
    why = "error: not run: the reply stopped early (max_tokens); it is incomplete"
    assert messages[-1] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": why, "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": why, "is_error": True},
    ]}


def test_a_reply_stopped_early_without_calls_adds_nothing():
    messages = [{"role": "user", "content": "Do it."}]
    with pytest.raises(AgentStopped, match=r"^the reply stopped early \(pause_turn\)$"):
        stop_incomplete_turn(messages, [], "pause_turn")
    assert len(messages) == 1
    with pytest.raises(Refused) as refused:
        stop_incomplete_turn(messages, [tool_call("toolu_1")], "refusal")
    assert str(refused.value) == "the model declined to go on with this request (refusal)"
    assert len(messages) == 1


def test_a_full_context_window_makes_room_and_says_how_much():
    messages = [{"role": "user", "content": [result("toolu_0", "old")]}, reply(tool_call("t1"))]
    with pytest.raises(AgentStopped) as raised:
        stop_incomplete_turn(messages, [tool_call("toolu_1")], "model_context_window_exceeded")
    assert str(raised.value) == (
        "the conversation filled the model's context window; the 1 oldest tool results were "
        "taken out of the history to make room"
    )
    with pytest.raises(AgentStopped) as raised:
        stop_incomplete_turn([{"role": "user", "content": "Hi."}], [],
                             "model_context_window_exceeded")
    assert str(raised.value) == ("the conversation filled the model's context window; there is "
                                 "no tool result left to take out: start a new session")


def test_a_new_message_joins_a_history_that_ends_on_the_user():
    messages = []
    add_user_message(messages, "First.")
    add_user_message(messages, "Second.")
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "First."},
                                                     {"type": "text", "text": "Second."}]}]
    messages.append(reply(said("Answer.")))
    add_user_message(messages, "Third.")
    assert [message["role"] for message in messages] == ["user", "assistant", "user"]


def test_a_copy_of_the_history_undoes_a_turn_but_shares_the_blocks():
    messages = [{"role": "user", "content": [{"type": "text", "text": "Hi."}]}]
    copy = copy_history(messages)
    copy[0]["content"].append({"type": "text", "text": "More."})
    assert len(messages[0]["content"]) == 1
    assert copy[0]["content"][0] is messages[0]["content"][0]


# -- commands.py: the blocklist of destructive commands, however they are spelled --
REFUSED = "refused: the command matches the blocklist of destructive commands (a teaching guard)"


@pytest.fixture(scope="module")
def blocked_commands(_scripted_server) -> list[str]:
    return load_agent("v1").BLOCKED_COMMANDS  # the lesson's own list


@pytest.mark.parametrize(
    "command",
    [
        "rm -Rf /", "rm -fR /", "rm -R -f /", "rm -f -R ~", "rm -r --force /",
        "rm --recursive -f ~", "rm -v -Rf /", "/bin/rm -Rf /", "cd src && rm -rf /",
        "sudo\tls", "/usr/bin/sudo ls", "mkfs.ext4 /dev/sda1", "dd if=/dev/zero of=/dev/sda",
        ":(){ :|:& };:", "shutdown -h now", "/sbin/reboot",
    ],
)
def test_the_blocklist_refuses_however_the_command_is_spelled(blocked_commands, command):
    with pytest.raises(ToolError) as raised:
        refuse_if_blocked(command, blocked_commands)
    assert str(raised.value) == REFUSED


@pytest.mark.parametrize(
    "command",
    ["rm -rf build", "rm -Rf build/", "rm -R ~/old", "rm -f /tmp/a", "rm -r -v /", "ls /bin/rmdir",
     "grep -R TODO .", "echo rm -f notes", "python -m dd"],
)
def test_the_blocklist_lets_ordinary_commands_through(blocked_commands, command):
    refuse_if_blocked(command, blocked_commands)


@pytest.mark.parametrize(
    ("command", "spelled"),
    [
        ("rm  -R\t-f /", "rm -rf / "),
        ("/bin/rm --force --recursive ~", "rm -rf ~ "),
        ("rm -fr -i /tmp", "rm -rf /tmp "),
        ("/usr/bin/sudo  ls", "sudo ls "),
        ("rm -r /", "rm -r / "),
    ],
)
def test_the_blocklist_reads_one_spelling_of_each_command(command, spelled):
    assert blocklist_spelling(command) == spelled
