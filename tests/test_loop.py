"""The agent loop: stop reasons, caps, API errors, streaming and caching, seen through the real SDK.

Every version has this loop, so every test runs against every version script. The scripted server
checks each request against the API's rules; a test fails on any violation even if it asserts
nothing."""

import re
import sys
from pathlib import Path
from typing import get_args

import pytest
from anthropic.resources.messages.messages import DEPRECATED_MODELS
from anthropic.types import ModelParam

from scripted.endpoints import BY_NAME
from scripted.server import prompt_units, tokens
from tests.agents import once, press_ctrl_c_once, python_command, results_sent

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


def test_default_model_is_the_current_sonnet_of_the_installed_sdk(make_agent, monkeypatch):
    monkeypatch.delenv("MODEL_ID", raising=False)
    agent = make_agent()
    # the SDK lists its models newest first
    sonnets = [name for name in get_args(get_args(ModelParam)[0]) if "sonnet" in name]
    assert agent.MODEL_ID == sonnets[0]
    assert agent.MODEL_ID not in DEPRECATED_MODELS


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
    assert [request.body["max_tokens"] for request in scripted_api.requests] == [64_000, 128_000]
    assert "incomplete" in capsys.readouterr().err
    assert agent.run_turn(history, "try again, smaller") == 0
    assert [message["role"] for message in history] == ["user", "assistant", "user", "assistant"]


@once("v1")
def test_a_refused_exchange_leaves_the_history_and_the_user_is_told(scripted_api, agent, capsys):
    scripted_api.play(
        {
            "turns": [
                {"text": "Hello."},
                {"text": "I can't help with that.", "stop_reason": "refusal"},
                {"expect": {"last_user_contains": "something else"}, "text": "Sure."},
            ]
        }
    )
    history = []
    assert agent.run_turn(history, "hi") == 0
    before = [{**message, "content": message["content"][:]} for message in history]
    assert agent.run_turn(history, "something bad") == 1
    assert history == before
    assert "refusal" in capsys.readouterr().err
    assert agent.run_turn(history, "something else") == 0
    assert "something bad" not in str(scripted_api.requests[-1].body["messages"])


@once("v1")
def test_an_empty_reply_after_tool_results_is_not_a_silent_success(scripted_api, agent, capsys):
    call = {"tool_calls": [{"name": "bash", "input": {"command": "true"}}]}
    scripted_api.play({"turns": [call, {"text": " "}]})
    assert agent.run_turn([], "check it") == 1
    assert "empty reply after the tool results" in capsys.readouterr().err


# -- thinking: shown to the user, sent back as it came --
THINKING_TURNS = [
    {
        "thinking": "The user wants a file.\nWrite it, then check it.",
        "text": "Writing notes.txt first.",
        "tool_calls": [{"name": "write_file", "input": {"path": "notes.txt", "content": "1"}}],
    },
    {"text": "notes.txt is written."},
]


def test_thinking_and_notes_are_shown_dimmed_and_go_back_as_they_came(scripted_api, agent, capsys):
    scripted_api.play({"turns": THINKING_TURNS})
    history = []
    assert agent.run_turn(history, "write notes.txt") == 0
    out = capsys.readouterr().out
    assert "  ┊ The user wants a file.\n  ┊ Write it, then check it.\n" in out
    assert "Writing notes.txt first." in out and "notes.txt is written." in out
    sent_back = scripted_api.requests[1].body["messages"][1]["content"]
    thought = [block for block in sent_back if block["type"] == "thinking"]
    # the scripted server refuses any other: each block exactly as it came, signature and all
    assert thought[0]["thinking"] == "The user wants a file.\nWrite it, then check it."
    assert thought[0]["signature"] == history[1]["content"][0].signature


@once("v1")
def test_on_sonnet_5_the_same_request_shows_thinking_and_the_notes_stay_text(
    scripted_api, make_agent, capsys
):
    agent = make_agent(MODEL_ID="claude-sonnet-5")
    scripted_api.play({"turns": THINKING_TURNS})
    assert agent.run_turn([], "write notes.txt") == 0
    out = capsys.readouterr().out
    assert "  ┊ The user wants a file.\n" in out and "\nWriting notes.txt first." in out
    assert scripted_api.requests[0].body["thinking"] == {
        "type": "adaptive",
        "display": "summarized",
    }


@once("v1")
def test_a_thinking_block_cut_by_max_tokens_is_not_sent_back(scripted_api, agent, capsys):
    scripted_api.play(
        {
            "turns": [
                {"thinking": "A long train of thought, cut", "stop_reason": "max_tokens"},
                {"expect": {"last_user_contains": "go on"}, "text": "Here it is."},
            ]
        }
    )
    history = []
    assert agent.run_turn(history, "think hard") == 1
    assert "cut short at max_tokens" in capsys.readouterr().err
    assert agent.run_turn(history, "go on") == 0  # a re-sent unsigned block would be a 400


# -- failures the real API sends, and what the session does --
@once("v1")
def test_an_error_event_mid_stream_is_retried_with_the_history_unchanged(scripted_api, agent):
    broken = {"text": "Half of this arrives", "error": {"status": 529, "midstream": True}}
    scripted_api.play({"turns": [broken, {"text": "The whole answer."}]})
    history = []
    assert agent.run_turn(history, "hi") == 0
    first, second = (request.body for request in scripted_api.requests)
    assert first == second and history[-1]["content"][0].text == "The whole answer."


BIG_OUTPUT = {"name": "bash", "input": {"command": python_command("print('x' * 40000)")}}


@once("v1")
def test_after_prompt_too_long_the_oldest_tool_results_make_room_and_the_next_turn_works(
    scripted_api, agent, capsys
):
    # Two results of about 7,500 tokens each (cut to TOOL_RESULT_BUDGET): the window holds the
    # tools, the system prompt and one of them, not two.
    scripted_api.play(
        {
            "context_window": 14_000,
            "turns": [
                {"tool_calls": [BIG_OUTPUT]},
                {"tool_calls": [BIG_OUTPUT]},
                {"expect": {"last_user_contains": "go on"}, "text": "Done."},
            ],
        }
    )
    history = []
    assert agent.run_turn(history, "print a lot twice") == 1
    assert scripted_api.refused[-1].startswith("prompt is too long")
    told = capsys.readouterr().err
    assert "no longer fits the model's context window" in told and "taken out" in told
    assert agent.run_turn(history, "go on") == 0


@once("v1")
def test_a_full_context_window_stops_the_reply_and_makes_room(scripted_api, agent, capsys):
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [{"name": "bash", "input": {"command": "echo one"}}]},
                {"text": "So far", "stop_reason": "model_context_window_exceeded"},
                {"expect": {"last_user_contains": "go on"}, "text": "Done."},
            ]
        }
    )
    history = []
    assert agent.run_turn(history, "work") == 1
    assert "filled the model's context window" in capsys.readouterr().err
    assert agent.run_turn(history, "go on") == 0
    results = scripted_api.requests[-1].body["messages"][2]["content"]
    assert results[0]["content"].startswith("[this tool result was taken out")


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
    # the model thinks: its first lines are on the screen, the rest and the answer are not
    "while it thinks": {"thinking": LONG_TEXT.replace(", ", ",\n"), "text": "x", "hold": "midway"},
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


# -- a prompt too long, a max_tokens too large: on endpoints that word it their own way --


def prompt_tokens(body: dict) -> int:
    """The prompt's size as the scripted server counts it against the context window."""
    return sum(tokens(unit) for unit in prompt_units(body))


# What LiteLLM's OpenAI-format route passes on when the backend says the prompt is too long, in
# OpenAI's words: as tests/test_litellm.py sees it from LiteLLM 1.108.7, over six lines.
LITELLM_TOO_LONG = (
    "litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: "
    "OpenAIException - This model's maximum context length is 25000 tokens. However, your "
    "messages resulted in 30012 tokens. Please reduce the length of the messages.\n"
    "model=gpt-4o-mini. context_window_fallbacks=None. fallbacks=None.\n\n"
    "Set 'context_window_fallback' - https://docs.litellm.ai/docs/routing#fallbacks\n\n"
    "LiteLLM: model group 'gpt-4o-mini' failed with the error above. No fallback was attempted."
)


@pytest.mark.parametrize(
    ("endpoint", "refusal"),
    [
        ("anthropic", None),  # by size: "prompt is too long: 30012 tokens > 25000 maximum"
        ("llama.cpp", None),  # by size, in its words and in OpenAI's shape
        ("litellm-openai", {"status": 400, "message": LITELLM_TOO_LONG}),
        # the same words as an `event: error` in a 200 stream (see STREAM_ERROR in setup.py)
        ("litellm-openai", {"status": 400, "message": LITELLM_TOO_LONG, "midstream": True}),
    ],
    ids=["anthropic", "llama.cpp", "litellm-openai", "litellm-openai-midstream"],
)
def test_a_message_too_long_for_the_window_is_taken_back_and_the_next_one_works(
    scripted_api, make_agent, capsys, endpoint, refusal
):
    pasted = "lorem ipsum " * 10_000  # 120,000 characters: about 30,000 tokens
    scenario = {
        "endpoint": endpoint,
        "context_window": 25_000,
        "turns": [{"expect": {"last_user_contains": "Summarize"}, "text": "Short and fine."}],
    }
    if refusal:  # in words the server does not play by size
        scenario = {**scenario, "turns": [{"error": refusal}, *scenario["turns"]]}
        del scenario["context_window"]
    scripted_api.play(scenario)
    agent = make_agent(**scripted_api.endpoint_env(endpoint))
    history = []
    assert agent.run_turn(history, pasted) == 1
    [told] = [line for line in capsys.readouterr().err.splitlines() if "your message" in line]
    assert told.startswith("[error: your message is 120,000 characters") and told.endswith("]")
    assert "25000" in told and "taken back" in told and history == []  # the limit, as said
    assert agent.run_turn(history, "Summarize the README.") == 0
    sent = scripted_api.requests[-1].body["messages"]
    assert [message["role"] for message in sent] == ["user"]  # v2+ add their planning reminder
    assert sent[0]["content"][0] == {"type": "text", "text": "Summarize the README."}
    assert all(pasted not in block["text"] for block in sent[0]["content"])


@once("v1")
def test_old_tool_results_that_fill_the_window_on_a_turns_first_request_make_room(
    scripted_api, agent, capsys
):
    scripted_api.play({"turns": [{"tool_calls": [BIG_OUTPUT]}, {"text": "Printed."}]})
    history = []
    assert agent.run_turn(history, "print a lot") == 0
    full = prompt_tokens(scripted_api.requests[-1].body)  # the 40,000 characters cut to 30,000
    question = "And now? " + "why " * 500  # about 500 tokens: over the window, far below the result
    scripted_api.play(
        {
            "context_window": full + 200,
            "turns": [{"expect": {"last_user_contains": "And now?"}, "text": "Now this."}],
        }
    )
    assert agent.run_turn(history, question) == 1
    told = capsys.readouterr().err
    assert "the 1 oldest tool results were taken out" in told and "send your message again" in told
    assert agent.run_turn(history, question) == 0
    sent = scripted_api.requests[-1].body["messages"]
    assert sent[2]["content"][0]["content"].startswith("[this tool result was taken out")
    assert sent[-1]["content"] == [{"type": "text", "text": question}]  # once, not twice


def two_tool_results(size: int) -> list:
    """A finished turn whose two tool results hold `size` characters each."""
    calls = [{"type": "tool_use", "id": f"toolu_{n}", "name": "bash",
              "input": {"command": f"cat part{n}.txt"}} for n in (1, 2)]
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": letter * size}
               for n, letter in ((1, "a"), (2, "b"))]
    return [
        {"role": "user", "content": [{"type": "text", "text": "show both parts"}]},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": results},
        {"role": "assistant", "content": [{"type": "text", "text": "Both shown."}]},
    ]


@pytest.mark.allow_leftover_turns
@pytest.mark.parametrize(
    ("length", "told"),
    [  # the two results hold 1,200 characters between them, 600 each
        (1_000, "no longer fits the model's context window"),  # more than one, less than both
        (1_200, "no longer fits the model's context window"),  # as much as both: room is made
        (1_201, "your message is 1,201 characters"),  # one more than both: taken back
    ],
)
@once("v1")
def test_the_message_is_taken_back_only_when_it_is_larger_than_all_old_tool_results(
    scripted_api, agent, capsys, length, told
):
    too_long = {"status": 400, "message": "prompt is too long: 30012 tokens > 25000 maximum"}
    scripted_api.play({"turns": [{"error": too_long}, {"text": "Never sent."}]})
    history = two_tool_results(600)
    assert agent.run_turn(history, "q" * length) == 1
    [line] = [line for line in capsys.readouterr().err.splitlines() if "context window" in line]
    assert told in line


@pytest.mark.allow_leftover_turns
@pytest.mark.parametrize(
    ("endpoint", "max_tokens"),
    [
        # llama.cpp quotes the number: "request (64000 tokens) exceeds the available context size"
        ("llama.cpp", "64000"),
        # the Messages API names the field: "max_tokens: 128001 > 128000, ..."
        pytest.param("anthropic", "128001", marks=pytest.mark.allow_violations),
    ],
)
@once("v1")
def test_max_tokens_beyond_the_endpoints_limit_is_one_line_that_names_max_tokens(
    scripted_api, make_agent, capsys, endpoint, max_tokens
):
    scripted_api.play({"endpoint": endpoint, "turns": [{"text": "Never sent."}]})
    agent = make_agent(**{**scripted_api.endpoint_env(endpoint), "MAX_TOKENS": max_tokens})
    history = []
    assert agent.run_turn(history, "hi") == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"refused max_tokens={max_tokens}" in line and "set MAX_TOKENS lower" in line
    assert "context window" not in line  # not taken for a prompt too long
    assert len(scripted_api.requests) == 1  # asked once: the request is not sized down
    assert history == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


@pytest.mark.parametrize("endpoint", ["anthropic", "ollama", "llama.cpp"])
@once("v1")
def test_thinking_is_shown_and_goes_back_only_with_the_signature_it_came_with(
    scripted_api, make_agent, capsys, endpoint
):
    # signed (Claude), no signature field (Ollama), "" (llama.cpp)
    scripted_api.play(
        {
            "endpoint": endpoint,
            "turns": [
                {
                    "thinking": "Look first.",
                    "tool_calls": [{"name": "bash", "input": {"command": "echo hi"}}],
                },
                {"expect": {"tool_result_contains": "hi"}, "text": "It says hi."},
            ],
        }
    )
    agent = make_agent(**scripted_api.endpoint_env(endpoint))
    assert agent.run_turn([], "say hi") == 0
    assert "┊ Look first." in capsys.readouterr().out
    came = scripted_api.requests[0].reply["body"]
    went = scripted_api.requests[1].body["messages"][1]["content"]
    signatures = [block.get("signature") for block in went if block["type"] == "thinking"]
    if BY_NAME[endpoint].thinking == "signed":
        assert signatures == [came["content"][0]["signature"]] and signatures[0]
    else:
        assert signatures == []  # nothing proves it: the endpoint checks nothing there either


@once("v1")
def test_a_failed_tool_says_so_in_its_text_where_the_route_drops_is_error(scripted_api, make_agent):
    # LiteLLM's OpenAI-format route: is_error does not reach the model; tool ids are call_...
    calls = [
        {"name": "read_file", "input": {"path": "missing.txt"}},
        {"name": "bash", "input": {"command": "echo fine"}},
    ]
    scripted_api.play(
        {"endpoint": "litellm-openai", "turns": [{"tool_calls": calls}, {"text": "Noted."}]}
    )
    agent = make_agent(**scripted_api.endpoint_env("litellm-openai"))
    history = []
    assert agent.run_turn(history, "read it") == 0
    ids = [block.id for block in history[1]["content"] if block.type == "tool_use"]
    failed, fine = results_sent(scripted_api)
    assert [failed["tool_use_id"], fine["tool_use_id"]] == ids and ids[0].startswith("call_")
    assert failed["is_error"] and failed["content"].startswith("error: ")
    assert not fine["is_error"] and fine["content"].startswith("fine")


@pytest.mark.parametrize("endpoint", ["llama.cpp", "litellm-openai"])
@once("v1")
def test_usage_that_only_the_end_of_the_stream_carries_is_shown(
    scripted_api, make_agent, capsys, endpoint
):
    scripted_api.play({"endpoint": endpoint, "turns": [{"text": "Hi."}]})
    agent = make_agent(**scripted_api.endpoint_env(endpoint))
    assert agent.run_turn([], "hi") == 0
    shown = capsys.readouterr().out  # message_start said 0 input tokens; message_delta, more
    assert "tokens: in " in shown and "tokens: in 0," not in shown


@pytest.mark.parametrize(
    ("endpoint", "model", "cache_figures"),
    [
        # below the model's cache minimum (4,096 tokens) nothing is cached, and Claude says 0
        ("anthropic", "claude-opus-4-6", ", cache write 0, cache read 0"),
        # its usage has input and output only: no cache figures, and no 0 that claims a miss
        ("ollama", "", "; no cache figures: the endpoint sent none"),
        ("vllm", "", "; no cache figures: the endpoint sent none"),  # ... counted at the end
    ],
)
@once("v1")
def test_the_cache_figures_are_shown_only_where_the_endpoint_counts_them(
    scripted_api, make_agent, capsys, endpoint, model, cache_figures
):
    scripted_api.play({"endpoint": endpoint, "turns": [{"text": "Hi."}]})
    env = scripted_api.endpoint_env(endpoint)
    if model:
        env["MODEL_ID"] = model
    agent = make_agent(**env)
    assert agent.run_turn([], "hi") == 0
    shown = capsys.readouterr().out
    assert re.search(rf"\[tokens: in [1-9][\d,]*, out [1-9][\d,]*{cache_figures}\]", shown), shown


@once("v1")
def test_an_openai_shaped_error_is_one_line_with_its_type_and_message(
    scripted_api, make_agent, capsys
):
    # llama.cpp answers in OpenAI's shape: {"error": {"message", "type", "param": null, "code"}}
    failure = {"status": 400, "message": "Failed to parse the tool call arguments"}
    scripted_api.play({"endpoint": "llama.cpp", "turns": [{"error": failure}]})
    agent = make_agent(**scripted_api.endpoint_env("llama.cpp"))
    assert agent.run_turn([], "hi") == 1
    assert scripted_api.requests[0].reply["body"]["error"]["param"] is None
    [line] = capsys.readouterr().err.strip().splitlines()
    said = "the API answered 400: invalid_request_error: Failed to parse the tool call arguments"
    assert said in line and "{" not in line and "None" not in line
