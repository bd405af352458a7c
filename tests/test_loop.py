"""The agent loop: stop reasons, caps, API errors, streaming and caching, seen through the real SDK.

Every version has this loop, so every test runs against every version script. The scripted server
checks each request against the API's rules; a test fails on any violation even if it asserts
nothing."""

import sys
from pathlib import Path

import pytest
from anthropic.resources.messages.messages import DEPRECATED_MODELS

from tests.agents import once, press_ctrl_c_once

SCENARIOS = Path(__file__).parent / "scenarios"


def test_text_streams_to_the_user_and_usage_is_shown(scripted_api, agent, capsys):
    scripted_api.play(
        {"turns": [{"text": "Hello from the scripted model, streamed in small pieces."}]}
    )
    assert agent.run_turn([], "hi") == 0
    out = capsys.readouterr().out
    assert "Hello from the scripted model, streamed in small pieces.\n" in out
    assert "tokens: in " in out and "cache read" in out


def test_all_calls_of_a_turn_answered_in_one_message_in_order(scripted_api, agent, capsys):
    scripted_api.play(SCENARIOS / "two_calls_in_one_turn.yaml")
    history = []
    assert agent.run_turn(history, "go") == 0
    calls = [block.id for block in history[1]["content"] if block.type == "tool_use"]
    assert [result["tool_use_id"] for result in history[2]["content"]] == calls
    out = capsys.readouterr().out
    assert "> write_file" in out and "> bash" in out


def test_every_request_asks_for_caching_with_an_identical_prefix(scripted_api, agent):
    scripted_api.play(SCENARIOS / "two_calls_in_one_turn.yaml")
    agent.run_turn([], "go")
    bodies = [request.body for request in scripted_api.requests]
    assert all(body["cache_control"] == {"type": "ephemeral"} for body in bodies)
    assert len({repr((body["system"], body["tools"])) for body in bodies}) == 1
    assert scripted_api.requests[-1].body["model"] == agent.MODEL_ID


def test_default_model_is_not_deprecated_in_the_installed_sdk(make_agent, monkeypatch):
    monkeypatch.delenv("MODEL_ID", raising=False)
    agent = make_agent()
    assert agent.MODEL_ID.startswith("claude-") and agent.MODEL_ID not in DEPRECATED_MODELS


def test_an_empty_reply_is_not_kept_so_the_next_request_stays_valid(scripted_api, agent):
    scripted_api.play(
        {"turns": [{"text": " "}, {"expect": {"last_user_contains": "hello?"}, "text": "Sorry."}]}
    )
    history = []
    assert agent.run_turn(history, "hi") == 0
    assert agent.run_turn(history, "hello?") == 0
    assert [message["role"] for message in history] == ["user", "assistant"]


def test_an_empty_base_url_means_the_default_endpoint(make_agent, monkeypatch):
    monkeypatch.setenv(
        "ANTHROPIC_BASE_URL", ""
    )  # as a blank `ANTHROPIC_BASE_URL=` line in .env leaves it
    assert str(make_agent().client.base_url).startswith("https://api.anthropic.com")


def test_max_tokens_with_a_cut_call_does_not_run_it_and_keeps_history_valid(
    scripted_api, agent, tmp_path, capsys
):
    scripted_api.play(SCENARIOS / "max_tokens_mid_call.yaml")
    history = []
    assert agent.run_turn(history, "write a long file") == 1
    assert not (tmp_path / "half.txt").exists()
    assert "incomplete" in capsys.readouterr().err
    assert agent.run_turn(history, "try again, smaller") == 0
    assert [message["role"] for message in history] == ["user", "assistant", "user", "assistant"]


def test_refusal_is_reported_not_treated_as_an_answer(scripted_api, agent, capsys):
    scripted_api.play({"turns": [{"text": "I can't help with that.", "stop_reason": "refusal"}]})
    assert agent.run_turn([], "something bad") == 1
    assert "refusal" in capsys.readouterr().err


def test_pause_turn_sends_the_history_back_so_the_model_resumes(scripted_api, agent):
    scripted_api.play(
        {"turns": [{"text": "Working on it", "stop_reason": "pause_turn"}, {"text": "Finished."}]}
    )
    history = []
    assert agent.run_turn(history, "long job") == 0
    assert scripted_api.requests[1].body["messages"][-1]["role"] == "assistant"
    assert history[-1]["content"][0].text == "Finished."


def test_round_cap_stops_a_runaway_loop_with_a_clear_message(scripted_api, make_agent, capsys):
    agent = make_agent(MAX_ROUNDS=3)
    scripted_api.play(
        {"turns": [{"tool_calls": [{"name": "bash", "input": {"command": "true"}}], "repeat": 3}]}
    )
    history = []
    assert agent.run_turn(history, "loop forever") == 1
    assert len(scripted_api.requests) == 3
    err = capsys.readouterr().err
    assert "no final answer within the round cap of 3 model calls" in err
    assert "your conversation is kept: say how to go on" in err
    assert (
        history[-1]["role"] == "user"
    )  # the last calls were answered, so the next turn can follow


# -- API errors: one clear line, and the conversation survives --
@once("v1")
def test_rate_limit_is_retried_by_the_sdk(scripted_api, agent, capsys):
    scripted_api.play(SCENARIOS / "rate_limited_then_ok.yaml")
    assert agent.run_turn([], "hi") == 0
    assert len(scripted_api.requests) == 2
    assert "Hello after the retry." in capsys.readouterr().out


@once("v1")
def test_overloaded_after_retries_then_the_next_turn_works(scripted_api, agent, capsys):
    scripted_api.play(SCENARIOS / "overloaded_then_next_turn.yaml")
    history = []
    assert agent.run_turn(history, "first try") == 1
    assert "the API answered 529" in capsys.readouterr().err
    assert len(scripted_api.requests) == 3
    assert agent.run_turn(history, "second try") == 0
    first_user_message = scripted_api.requests[-1].body["messages"][0]
    texts = [
        block["text"]
        for block in first_user_message["content"]
        if not block["text"].startswith("<reminder>")
    ]
    assert texts == [
        "first try",
        "second try",
    ]  # v2 on: a planning reminder may follow the first text


@once("v1")
def test_bad_key_says_check_the_key_and_keeps_history(scripted_api, agent, capsys):
    scripted_api.play({"turns": [{"error": {"status": 401, "message": "invalid x-api-key"}}]})
    history = []
    assert agent.run_turn(history, "hi") == 1
    assert "check ANTHROPIC_API_KEY" in capsys.readouterr().err
    assert [message["role"] for message in history] == ["user"]
    assert history[0]["content"][0] == {
        "type": "text",
        "text": "hi",
    }  # v2 on: a planning reminder may follow


@pytest.mark.parametrize(
    "earlier",
    [
        [],
        [
            {"role": "user", "content": [{"type": "text", "text": "first"}]},
            {"role": "assistant", "content": "ok"},
        ],
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "first"}],
            },  # a turn stopped after its tool result:
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}],
            },
        ],  # the text joins it
    ],
)
def test_an_unexpected_failure_is_one_line_and_drops_only_that_turn(
    scripted_api, agent, capsys, earlier
):
    history = [{**message, "content": message["content"][:]} for message in earlier]
    assert (
        agent.run_turn(history, "caf\udce9") == 1
    )  # a lone surrogate: the SDK cannot encode the request
    assert capsys.readouterr().err.strip().startswith("[error: UnicodeEncodeError: ")
    assert history == earlier
    scripted_api.play({"turns": [{"text": "hello"}]})
    assert agent.run_turn(history, "hi") == 0


@once("v1")
def test_unknown_model_names_model_id(scripted_api, agent, capsys):
    scripted_api.play({"turns": [{"error": {"status": 404, "message": "model: claude-nope"}}]})
    assert agent.run_turn([], "hi") == 1
    assert "MODEL_ID=" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["hello", "日本語のメッセージ"])
def test_user_messages_join_an_unanswered_user_turn(agent, text):
    history = [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}
    ]
    agent.add_user_message(history, text)
    assert len(history) == 1 and history[0]["content"][-1] == {"type": "text", "text": text}


LONG_TEXT = "This answer streams in many small pieces, and the user stops it halfway through."
CTRL_C_MOMENTS = {
    # the model has the request and has not answered yet (a long wait for the first token)
    "waiting for the reply": {"text": LONG_TEXT, "hold": True},
    # half the answer is on the screen when the model stalls
    "while the reply streams": {"text": LONG_TEXT, "hold": "midway"},
    # the API said overloaded; the SDK sleeps 10 s before it asks again
    "while the SDK waits to retry": {"error": {"status": 529, "retry_after_ms": 10_000}},
}


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.usefixtures("ctrl_c_raises")
@pytest.mark.parametrize("moment", CTRL_C_MOMENTS)
def test_ctrl_c_anywhere_in_a_model_call_stops_the_turn_and_keeps_the_conversation(
    scripted_api, agent, capsys, moment
):
    turn = CTRL_C_MOMENTS[moment]
    next_turn = {"expect": {"last_user_contains": "go on"}, "text": "Back again."}
    scripted_api.play({"turns": [turn, next_turn]})
    requests = scripted_api.requests

    screen = sys.stdout  # capsys's: what the user has seen so far

    def the_moment_has_come() -> bool:
        if len(requests) != 1:
            return False
        if turn.get("hold") == "midway":  # the first half is on the screen
            return LONG_TEXT[:20] in screen.getvalue()
        # a held reply is stamped answered only once released; the others as they go out
        return turn.get("hold") is True or requests[0].answered > 0

    press_ctrl_c_once(the_moment_has_come)
    history = []
    assert agent.run_turn(history, "start") == 130
    scripted_api.release()  # a held reply goes out now, to a client that no longer listens
    shown = capsys.readouterr()
    assert "\n[interrupted: the turn stopped here" in "\n" + shown.err
    if moment == "while the reply streams":  # what had arrived stays on the screen, and no more
        assert LONG_TEXT[:20] in shown.out and LONG_TEXT not in shown.out
    # No retry was made after Ctrl-C, and the next turn joins the unanswered message: one user
    # message with both texts, which the API accepts.
    assert agent.run_turn(history, "go on") == 0
    assert len(requests) == 2
    [message] = requests[1].body["messages"]
    texts = [block["text"] for block in message["content"] if block["type"] == "text"]
    # v2 and later add a todo reminder to the first message; it is not what this test is about
    assert [text for text in texts if not text.startswith("<reminder>")] == ["start", "go on"]
    assert message["role"] == "user" and len(texts) == len(message["content"])
    assert "Back again." in capsys.readouterr().out
