"""v5's compaction, as the model and the user see it: when it starts, what the summary request
sends and reads from the cache, what the fresh history holds, and that nothing a failure or a
Ctrl-C interrupts leaves the conversation broken.

Sizes are the scripted server's (four characters of JSON a token), so a threshold can be set to
the exact size of a request: one token under it compacts, the size itself does not.
"""

from __future__ import annotations

import json
import sys

import pytest

from plumbing.compaction import prompt_size
from scripted import ROOT, SCRIPTS
from scripted.server import CHARACTERS_PER_TOKEN, canonical, check_scenario, prompt_units
from tests.agents import press_ctrl_c_once, run_in_process, versions_from

pytestmark = pytest.mark.parametrize("version", versions_from("v5"))

READ = {"tool_calls": [{"name": "read_file", "input": {"path": "notes.txt"}}]}
SUMMARY = "We read notes.txt: the deploy key is K-7731."
DONE = {"text": "Done."}


def summary_track(times: int = 1, **turn) -> dict:
    """The model's answers to the summary question, matched wherever it comes in a session."""
    return {"match": "Write a summary of the work so far", "in": "last",
            "turns": [{"text": SUMMARY, **turn, "repeat": times}]}


def summary_turn(agent, **turn) -> dict:
    """The summary request as the next turn in order, checked to be one."""
    return {"expect": {"last_user_contains": agent.SUMMARY_QUESTION}, "text": SUMMARY, **turn}


def texts(message: dict) -> list[str]:
    return [block["text"] for block in message["content"] if block["type"] == "text"]


def first_request_size(make_agent, api) -> int:
    """What the first request of `go` with a read sends, cache included: measured, not guessed."""
    api.play({"turns": [READ, DONE]})
    assert make_agent().run_turn([], "go") == 0
    return prompt_size_of(api.requests[0])


def prompt_size_of(request) -> int:
    usage = request.reply["body"]["usage"]
    return sum(usage.values()) - usage["output_tokens"]


def system_and_tools_size(body: dict) -> int:
    """The tokens of a request's tools and system prompt, the prefix that comes before every
    history, counted as the scripted server counts a prefix."""
    units = [unit for unit in prompt_units(body) if "message" not in unit]
    return len("".join(canonical(unit) for unit in units)) // CHARACTERS_PER_TOKEN


# -- when it starts --


@pytest.mark.parametrize(("over_by", "compacts"), [(0, False), (1, True)])
def test_a_round_compacts_when_its_request_passed_compact_at_not_when_it_reached_it(
    version, scripted_api, make_agent, tmp_path, capsys, over_by, compacts
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    size = first_request_size(make_agent, scripted_api)
    agent = make_agent(COMPACT_AT=size - over_by)
    turns = [READ, summary_turn(agent), DONE] if compacts else [READ, DONE]
    scripted_api.play({"turns": turns})
    capsys.readouterr()
    assert agent.run_turn([], "go") == 0
    out = capsys.readouterr().out
    requests = scripted_api.requests
    assert len(requests) == len(turns)
    if not compacts:
        assert "compact" not in out
        return
    summary_request = requests[1]
    went_in = prompt_size_of(summary_request)
    came_out = summary_request.reply["body"]["usage"]["output_tokens"]
    assert f"[compacting (over COMPACT_AT={size - 1:,}): asking for a summary" in out
    assert (f"[compacted: {went_in:,} tokens of history went in, a summary of {came_out:,} "
            "tokens came out; the conversation goes on from it]") in out


def test_subagents_never_compact_only_the_main_conversation_does(
    version, scripted_api, make_agent, tmp_path
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    agent = make_agent(COMPACT_AT=1)  # every round of the main agent passes it
    task = {"name": "Task", "input": {"description": "read the notes", "agent_type": "explore",
                                      "prompt": "Read notes.txt and report the key."}}
    scripted_api.play({
        "turns": [{"tool_calls": [task]}, summary_turn(agent), DONE],
        "tracks": [{"match": "Read notes.txt and report", "turns": [READ, READ, {"text": "K"}]}],
    })
    assert agent.run_turn([], "go") == 0
    asked = [request.track for request in scripted_api.requests
             if agent.SUMMARY_QUESTION in json.dumps(request.body["messages"][-1])]
    assert asked == ["default"]


# -- the summary request and the cache --


def test_the_summary_request_is_the_history_plus_one_question_and_reads_it_from_the_cache(
    version, scripted_api, make_agent, tmp_path
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n" * 400)  # past the minimum
    agent = make_agent(COMPACT_AT=1)
    scripted_api.play({"turns": [READ, summary_turn(agent), READ, summary_turn(agent), DONE]})
    assert agent.run_turn([], "go") == 0
    first, summary, after, *_ = scripted_api.requests
    # The same system prompt and tools; the history as the last request sent it, then the reply
    # and its results, and one question after them in the same user message.
    assert summary.body["system"] == first.body["system"]
    assert summary.body["tools"] == first.body["tools"]
    assert summary.body["messages"][:1] == first.body["messages"]
    assert texts(summary.body["messages"][-1])[-1] == agent.SUMMARY_QUESTION
    assert summary.body["messages"][-1]["content"][0]["type"] == "tool_result"
    # What the first request wrote to the cache, the summary request reads.
    first_usage, summary_usage = (r.reply["body"]["usage"] for r in (first, summary))
    assert summary_usage["cache_read_input_tokens"] == prompt_size_of(first) > 0
    assert first_usage["cache_creation_input_tokens"] == prompt_size_of(first)
    # The request after it starts a new history: the breakpoint at the end of the system prompt
    # kept tools and system in the cache, so it reads them and writes only the fresh history.
    assert after.body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    after_usage = after.reply["body"]["usage"]
    kept_cached = system_and_tools_size(after.body)
    assert after_usage["cache_read_input_tokens"] == kept_cached > 0
    assert after_usage["cache_creation_input_tokens"] == prompt_size_of(after) - kept_cached
    assert prompt_size_of(after) < prompt_size_of(summary)
    next_summary = scripted_api.requests[3].reply["body"]["usage"]
    assert next_summary["cache_read_input_tokens"] == prompt_size_of(after)


# -- what survives --


def test_the_fresh_history_is_the_summary_then_the_request_todos_skills_and_files_in_order(
    version, scripted_api, make_agent, tmp_path
):
    skills = tmp_path / "skills-here"
    for name in ("commit-message", "review-diff"):
        (skills / name).mkdir(parents=True)
        (skills / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Use for {name}.\n---\nThe steps of {name}.\n")
    (tmp_path / "a.txt").write_text("alpha\n")
    agent = make_agent(COMPACT_AT=1)
    agent.install_skills(agent.load_skills([skills]))
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Change a.txt", "status": "in_progress", "activeForm": "Changing a.txt"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
    work = [  # loaded and changed in an order that is neither alphabetical nor reversed
        {"name": "todo", "input": {"items": todos}},
        {"name": "Skill", "input": {"name": "review-diff"}},
        {"name": "write_file", "input": {"path": "b.txt", "content": "beta\n"}},
        {"name": "Skill", "input": {"name": "commit-message"}},
        {"name": "edit_file", "input": {"path": "a.txt", "old_text": "alpha",
                                        "new_text": "ALPHA"}},
        {"name": "write_file", "input": {"path": "b.txt", "content": "beta, again\n"}},
    ]
    scripted_api.play({"turns": [{"tool_calls": work}, summary_turn(agent), DONE]})
    assert agent.run_turn([], "Change a.txt  and b.txt, then test") == 0
    [message] = scripted_api.requests[-1].body["messages"]
    assert message["role"] == "user"
    summary, kept = texts(message)
    assert summary == f"<summary>\n{SUMMARY}\n</summary>"
    assert "The user's latest request:\nChange a.txt  and b.txt, then test\n" in kept
    assert ("The todo list:\n- [completed] Read the code\n- [in_progress] Change a.txt\n"
            "- [pending] Run the tests\n") in kept
    assert "): review-diff, commit-message\n" in kept
    assert kept.endswith("Files changed: b.txt, a.txt")
    assert "The steps of" not in json.dumps(message)  # the skills' bodies went with the history


def test_a_second_compaction_keeps_what_the_first_kept(
    version, scripted_api, make_agent, tmp_path
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    agent = make_agent(COMPACT_AT=1)
    write = {"tool_calls": [{"name": "write_file", "input": {"path": "c.txt", "content": "c"}}]}
    scripted_api.play({"turns": [write, DONE, READ, DONE], "tracks": [summary_track(2)]})
    history = []
    assert agent.run_turn(history, "first request") == 0
    assert agent.run_turn(history, "second request") == 0
    [message] = scripted_api.requests[-1].body["messages"]
    kept = texts(message)[1]
    assert "The user's latest request:\nsecond request" in kept and "first request" not in kept
    assert kept.endswith("Files changed: c.txt")


# -- pairing and thinking --


def test_no_tool_use_or_thinking_block_of_the_old_history_is_sent_after_it(
    version, scripted_api, make_agent, tmp_path
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    agent = make_agent(COMPACT_AT=1)
    two_reads = {"thinking": "Two reads at once.", "text": "Reading twice.",
                 "tool_calls": READ["tool_calls"] * 2}
    scripted_api.play({"turns": [two_reads, summary_turn(agent), READ, summary_turn(agent),
                                 DONE]})
    assert agent.run_turn([], "go") == 0
    first_reply = scripted_api.requests[0].reply["body"]["content"]
    summary_request, after = scripted_api.requests[1], scripted_api.requests[2]
    # The summary request sends the reply back as it came: its signed thinking blocks unchanged,
    # each tool_use answered in the next message (the server checks both, and would refuse).
    assert summary_request.body["messages"][1]["content"] == first_reply
    assert [block["type"] for block in first_reply] == ["thinking", "thinking", "tool_use",
                                                        "tool_use"]
    # The fresh history has none of it: no thinking, no tool_use, no orphan tool_result.
    sent = after.body["messages"]
    assert [message["role"] for message in sent] == ["user"]
    assert {block["type"] for block in sent[0]["content"]} == {"text"}
    # The next round pairs its own call and result again, and compacts once more.
    assert scripted_api.requests[3].body["messages"][1]["content"][-1]["type"] == "tool_use"


# -- failures --


AGAIN = "; the history is kept as it was, and the next turn tries again (or type /compact)]"
# Every way a summary request can end without a summary (Ctrl-C has its own test below): the
# model's answer to the question, and why the screen says there is no summary.
NO_SUMMARY = {
    "an API error": ({"error": {"status": 400, "message": "scripted: no summary today"}},
                     "the API answered 400: invalid_request_error: scripted: no summary today"),
    "a tool call": (READ, "the model asked for a tool instead of writing a summary"),
    "thinking and no text": ({"thinking": "Nothing to add."},
                             "the model's reply held no summary text"),
    "cut at max_tokens": ({"text": SUMMARY, "stop_reason": "max_tokens"},
                          "the summary was cut off at max_tokens (MAX_TOKENS), so it may have lost "
                          "facts"),
    "a refusal": ({"text": SUMMARY, "stop_reason": "refusal"},
                  "the model declined to write a summary (refusal)"),
    "pause_turn": ({"text": SUMMARY, "stop_reason": "pause_turn"},
                   "the model paused before it wrote the summary (pause_turn)"),
    "a full context window": ({"text": SUMMARY, "stop_reason": "model_context_window_exceeded"},
                              "the summary request filled the model's context window"),
    "a stop sequence": ({"text": SUMMARY, "stop_reason": "stop_sequence"},
                        "the reply stopped early (stop_sequence)"),
    "a blank text": ({"text": " \n\t "}, "the model's reply held no summary text"),
}


@pytest.mark.parametrize("ending", list(NO_SUMMARY))
def test_a_summary_request_without_a_summary_keeps_the_history_and_says_why(
    version, scripted_api, make_agent, tmp_path, capsys, ending
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    agent = make_agent(COMPACT_AT=1)
    answer, why = NO_SUMMARY[ending]
    failed = {"expect": {"last_user_contains": agent.SUMMARY_QUESTION}, **answer}
    scripted_api.play({"turns": [READ, failed, DONE]})
    history = []
    assert agent.run_turn(history, "go") == 0
    _, asked, after = scripted_api.requests
    # The turn went on from the history as it was: the summary request's, without the question.
    assert after.body["messages"][:-1] == asked.body["messages"][:-1]
    assert after.body["messages"][-1]["content"] == asked.body["messages"][-1]["content"][:-1]
    assert texts(asked.body["messages"][-1])[-1] == agent.SUMMARY_QUESTION
    assert "<summary>" not in json.dumps(after.body)  # a cut or refused text was not taken
    assert [message["role"] for message in history] == ["user", "assistant", "user", "assistant"]
    assert f"[compaction failed: {why}{AGAIN}" in capsys.readouterr().err


def test_a_failed_compaction_costs_one_call_this_turn_and_the_next_turn_tries_again(
    version, scripted_api, make_agent, tmp_path, capsys
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    agent = make_agent(COMPACT_AT=1)  # every round passes it
    refused = {**summary_turn(agent), "stop_reason": "refusal"}
    scripted_api.play({"turns": [READ, refused, READ, READ, DONE,  # the first turn
                                 READ, summary_turn(agent), DONE]})  # the second
    history = []
    assert agent.run_turn(history, "first request") == 0
    first_turn = len(scripted_api.requests)
    assert agent.run_turn(history, "second request") == 0
    asked = [number for number, request in enumerate(scripted_api.requests)
             if agent.SUMMARY_QUESTION in json.dumps(request.body["messages"][-1])]
    assert (first_turn, asked) == (5, [1, 6])  # three rounds over it, one question a turn
    assert [message["role"] for message in history] == ["user", "assistant"]  # compacted
    err = capsys.readouterr().err
    assert err.count("[compaction failed: ") == 1


# -- what survives follows the history --


@pytest.mark.parametrize("taken_back", ["as too long", "after a refusal"])
def test_a_message_taken_back_is_not_the_latest_request_a_later_compaction_keeps(
    version, scripted_api, make_agent, tmp_path, capsys, taken_back
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    agent = make_agent()  # compacts only by hand here
    turns = [READ, {"text": "Read it."}]
    message = "Here is the whole log to go through: " + "x" * 200_000  # beyond the window
    if taken_back == "after a refusal":
        message = "Now do what you must not."
        turns.append({"text": "I can't help with that.", "stop_reason": "refusal"})
    turns.append({"expect": {"last_user_contains": "which key?"}, "text": "K-7731."})
    scripted_api.play({"turns": turns, "tracks": [summary_track()], "context_window": 20_000})
    history = []
    assert agent.run_turn(history, "read the notes") == 0
    assert agent.run_turn(history, message) == 1
    assert "is taken back" in capsys.readouterr().err or taken_back == "after a refusal"
    assert agent.compact_by_hand(history) == 0
    assert agent.run_turn(history, "which key?") == 0
    assert capsys.readouterr().err == ""  # nothing is blamed on the new message
    [fresh] = scripted_api.requests[-1].body["messages"]
    assert texts(fresh)[1].endswith("The user's latest request:\nread the notes")
    assert message[:30] not in json.dumps(fresh)


# -- the breakpoint at the end of the system prompt, where an endpoint refuses it --


@pytest.mark.parametrize("refused", ["cache_control", "system.0.cache_control"])
def test_an_endpoint_that_refuses_a_breakpoint_gets_none_and_the_turn_goes_on(
    version, scripted_api, make_agent, capsys, refused
):
    agent = make_agent()
    turns = [{"text": "Hello."}]
    scenario = {"turns": turns, "endpoint": "cloud-gateway"}  # refuses the top-level one
    if refused != "cache_control":  # an endpoint that refuses the system block's breakpoint
        error = {"status": 400, "message": f"{refused}: Extra inputs are not permitted"}
        scenario = {"turns": [{"error": error}, *turns]}
    scripted_api.play(scenario)
    assert agent.run_turn([], "hi") == 0
    first, again = scripted_api.requests
    assert first.body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in json.dumps(again.body)  # neither breakpoint is sent again
    assert again.body["system"] == [{"type": "text", "text": agent.SYSTEM}]
    assert "[the endpoint refused cache_control (no prompt caching" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_during_the_summary_request_keeps_the_old_history_valid(
    version, scripted_api, make_agent, tmp_path, capsys
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    agent = make_agent(COMPACT_AT=1)
    go_on = {"expect": {"last_user_contains": "go on"}, "text": "Back again."}
    scripted_api.play({"turns": [READ, summary_turn(agent, hold=True), go_on]})
    requests = scripted_api.requests
    press_ctrl_c_once(lambda: len(requests) == 2)
    history = []
    assert agent.run_turn(history, "go") == 130
    scripted_api.release()
    assert "[interrupted: the turn stopped here" in capsys.readouterr().err
    # The history is the one before the summary request: the read, its result, no question.
    assert [message["role"] for message in history] == ["user", "assistant", "user"]
    assert agent.SUMMARY_QUESTION not in str(history)
    assert agent.run_turn(history, "go on") == 0  # the server checks the pairing it sends
    assert history[-1]["content"][0].text == "Back again."


# -- by hand --


def test_slash_compact_at_the_prompt_compacts_between_turns(
    version, scripted_api, tmp_path
):
    script = ROOT / SCRIPTS[version]
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    scripted_api.play({"turns": [READ, {"text": "Read it."}, {"text": "K-7731."}],
                       "tracks": [summary_track()]})
    done = run_in_process(script, "--workdir", str(tmp_path), env={"COMPACT_AT": "1000000"},
                          input_text="read the notes\n/compact\nwhich key?\n")
    assert done.returncode == 0, done.stderr
    assert "[compacting (/compact): asking for a summary" in done.stdout  # not over COMPACT_AT
    assert "[compacted: " in done.stdout
    summary, last = scripted_api.requests[2:]
    assert summary.track == "Write a summary of the work so far"
    assert summary.body["messages"][-1]["role"] == "user"  # the question after the answer
    [message] = last.body["messages"]
    assert texts(message)[0] == f"<summary>\n{SUMMARY}\n</summary>"
    assert "The user's latest request:\nread the notes" in texts(message)[1]
    assert texts(message)[2] == "which key?"  # (and the planning reminder of a first message)


def test_slash_compact_with_nothing_to_compact_says_so_and_asks_nothing(
    version, scripted_api, tmp_path
):
    done = run_in_process(ROOT / SCRIPTS[version], "--workdir", str(tmp_path),
                          input_text="/compact\n")
    assert done.returncode == 0 and "[nothing to compact yet]" in done.stdout
    assert scripted_api.requests == []


def test_slash_compact_without_a_summary_keeps_the_history_and_says_why(
    version, scripted_api, make_agent, tmp_path, capsys
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    agent = make_agent()  # compacts only by hand here; every ending above goes through compact()
    answer, why = NO_SUMMARY["a refusal"]
    failed = {"expect": {"last_user_contains": agent.SUMMARY_QUESTION}, **answer}
    which = {"expect": {"last_user_contains": "which key?"}, "text": "K-7731."}
    scripted_api.play({"turns": [READ, {"text": "Read it."}, failed, which]})
    history = []
    assert agent.run_turn(history, "read the notes") == 0
    capsys.readouterr()
    assert agent.compact_by_hand(history) == 0
    assert f"[compaction failed: {why}{AGAIN}" in capsys.readouterr().err
    assert agent.run_turn(history, "which key?") == 0
    _, _, asked, after = scripted_api.requests
    # The next turn went on from the history as it was: the question's request, one message on.
    assert texts(asked.body["messages"][-1]) == [agent.SUMMARY_QUESTION]
    assert after.body["messages"][:-1] == asked.body["messages"][:-1]
    assert texts(after.body["messages"][-1]) == ["which key?"]
    assert [message["role"] for message in history] == ["user", "assistant"] * 3


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_during_slash_compact_keeps_the_history_and_the_next_turn_goes_on(
    version, scripted_api, make_agent, tmp_path, capsys
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    agent = make_agent()
    go_on = {"expect": {"last_user_contains": "go on"}, "text": "Back again."}
    scripted_api.play({"turns": [READ, {"text": "Read it."}, summary_turn(agent, hold=True),
                                 go_on]})
    history = []
    assert agent.run_turn(history, "read the notes") == 0
    requests = scripted_api.requests
    press_ctrl_c_once(lambda: len(requests) == 3)
    assert agent.compact_by_hand(history) == 130
    scripted_api.release()
    assert "[interrupted: the turn stopped here" in capsys.readouterr().err
    assert agent.run_turn(history, "go on") == 0
    asked, after = requests[2:]
    assert after.body["messages"][:-1] == asked.body["messages"][:-1]  # the same four, unchanged
    assert [message["role"] for message in history] == ["user", "assistant"] * 3
    assert agent.SUMMARY_QUESTION not in str(history)
    assert history[-1]["content"][0].text == "Back again."


def test_help_states_compact_at_in_effect(version, tmp_path):
    done = run_in_process(ROOT / SCRIPTS[version], "--help", env={"COMPACT_AT": "12345"})
    assert " COMPACT_AT=12345; /compact at the prompt compacts by hand." in done.stdout
    assert "Compaction: COMPACT_AT (8000 input tokens" in done.stdout


# -- the scripted server's part --


def test_a_track_with_in_last_is_matched_by_the_last_user_message_only(version):
    track = {"match": "x", "turns": [{"text": "y"}]}
    assert check_scenario({"turns": [], "tracks": [{**track, "in": "last"}]})
    with pytest.raises(ValueError, match="`in`: first or last"):
        check_scenario({"turns": [], "tracks": [{**track, "in": "middle"}]})


def test_prompt_size_counts_what_the_cache_read_and_wrote_too(version):
    class Usage:
        input_tokens, cache_read_input_tokens, cache_creation_input_tokens = 3, 500, 40

    assert prompt_size(Usage()) == 543
    Usage.cache_read_input_tokens = Usage.cache_creation_input_tokens = None  # an endpoint's
    assert prompt_size(Usage()) == 3


# -- the benchmark the chapter quotes --


def test_the_bench_plays_each_way_and_the_chapter_quotes_its_figures(version, built_site):
    numbers = json.loads((ROOT / ".generated" / "numbers.json").read_text(encoding="utf-8"))
    table = (ROOT / ".generated" / "bench" / "compaction.txt").read_text(encoding="utf-8")
    rows = [line[2:21].rstrip() for line in table.splitlines()[2:-1]]
    assert rows == ["none, sent again", "none, 1M window", "clearing", "learn-claude-code", "v5",
                    "v5, lossy summary", "v5, no breakpoint"]
    billed = numbers["compaction.compaction.billed"]
    assert f"  v5                 {billed:>13}" in table
    assert f"  v5, lossy summary  {numbers['compaction.lossy.billed']:>13}" in table
    *_, kept, lossy, _, _ = table.splitlines()
    assert kept.endswith("  2 of 2") and lossy.endswith("  1 of 2")
