"""What real software sent: sessions recorded through a real local stack (LiteLLM's proxy in
front of an OpenAI-format server with SmolLM2-135M; scripted/live_local.py made them, under
tests/recordings/real/), replayed through the current scripts byte for byte (tests/canned.py).
Each test pins one behaviour of issue 37 by what a real server sent: a reply that is no reply
(item 1), usage as reported (item 2), tool_choice with the tools (item 3). And v5's compaction
when an endpoint counts no input, or far less than it was sent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from plumbing.compaction import prompt_size
from plumbing.screen import ReportedUsage
from tests.agents import once
from tests.canned import (
    START,
    STOP,
    Canned,
    canned_endpoint,  # noqa: F401 (the fixture `canned`)
    delta,
    text_block,
    tool_block,
)

REAL = Path(__file__).resolve().parent / "recordings" / "real"


def recorded(name: str) -> tuple[dict, list[dict], list]:
    """A recording's header, its requests, and each reply as it came: the events of a stream,
    or an error's status and body (Canned sends either)."""
    lines = [json.loads(line) for line in (REAL / f"{name}.jsonl").read_text(
        encoding="utf-8").splitlines()]
    requests = [line["body"] for line in lines if line["kind"] == "request"]
    replies: list = [[] for _ in requests]
    status = {line["exchange"]: line["status"] for line in lines if line["kind"] == "reply"}
    for line in lines:
        if line["kind"] == "event":
            replies[line["exchange"] - 1].append(line["data"])
        elif line["kind"] == "body":
            replies[line["exchange"] - 1] = {"status": status[line["exchange"]],
                                             "body": line["data"]}
    return lines[0], requests, replies


def replayed_through(canned: Canned, make_agent, name: str) -> int:
    """The current script, one turn, answered with the replies the real stack sent."""
    header, _, replies = recorded(name)
    canned.replies += replies
    agent = make_agent(ANTHROPIC_BASE_URL=f"http://{canned.host}", **header["settings"])
    return agent.run_turn([], header["task"])


@once("v1")
def test_tool_choice_goes_out_as_it_went_to_the_real_stack(canned, make_agent):
    """Item 3, by what the live run sent: the current script's request has the same tools and
    the same automatic choice as the recorded one."""
    _, [recorded_request], _ = recorded("v1_litellm_llama_cpp_python")
    assert replayed_through(canned, make_agent, "v1_litellm_llama_cpp_python") == 1
    [sent] = canned.requests
    assert sent["tool_choice"] == recorded_request["tool_choice"] == {"type": "auto"}
    assert [tool["name"] for tool in sent["tools"]] == [
        tool["name"] for tool in recorded_request["tools"]]


# llama-cpp-python behind LiteLLM, two chat formats: the server answered 200 through the gateway,
# then failed while it made the prompt; the error it logged is in the recording's header
FAILED_AFTER_200 = {
    ("v1", "v1_litellm_llama_cpp_python"): (
        "--chat_format chatml-function-calling",
        "ValueError: Automatic streaming tool choice is not supported"),
    ("v1", "v1_litellm_llama_cpp_python_gguf"): (
        "the GGUF's own chat template",
        'TypeError: can only concatenate str (not "list") to str'),
}


@pytest.mark.parametrize(("version", "name"), FAILED_AFTER_200, ids=lambda name: name)
def test_a_server_that_failed_after_the_gateways_200_ends_the_run_with_one_line(
    canned, make_agent, capsys, version, name
):
    """LiteLLM sends a reply of one empty text block and end_turn: no tool call, no text. The
    one-shot run exits 1, and the one line names the gateway's host and the setting to change."""
    header, requests, [reply] = recorded(name)
    server, logged = FAILED_AFTER_200[version, name]
    assert server in header["upstream"] and logged in header["server_log"]
    assert requests[0]["tool_choice"] == {"type": "auto"}
    blocks = [event["content_block"] for event in reply if event["type"] == "content_block_start"]
    assert blocks == [{"type": "text", "text": ""}]
    deltas = [event["delta"] for event in reply if event["type"] == "content_block_delta"]
    assert deltas == [] and reply[-2]["delta"]["stop_reason"] == "end_turn"
    assert replayed_through(canned, make_agent, name) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"[error: the endpoint at {canned.host} sent an empty reply (stop "
                           "reason end_turn, no text, no tool call): the endpoint, or the "
                           "server behind it, is the likely cause, not the model")
    assert "change the server's chat format (llama-cpp-python: --chat_format;" in line
    assert line.endswith("; your conversation is kept]")


@once("v5")
def test_v5s_system_prompt_as_blocks_is_refused_by_llama_cpp_python_in_one_line(
    canned, make_agent, capsys
):
    """v5 sends its system prompt as a block with a cache breakpoint; LiteLLM passes the list on,
    and llama-cpp-python's schema takes only a string there: HTTP 500 from the gateway, whose
    message quotes the whole system prompt back. The SDK tries three times; then one line, the
    start of the error and whose fault it is, naming the gateway's host."""
    header, requests, replies = recorded("v5_litellm_llama_cpp_python")
    assert isinstance(requests[0]["system"], list) and len(replies) == 3
    assert [reply["status"] for reply in replies] == [500, 500, 500]
    assert "Input should be a valid string" in replies[0]["body"]["error"]["message"]
    assert replayed_through(canned, make_agent, "v5_litellm_llama_cpp_python") == 1
    err = capsys.readouterr().err
    [line] = [line for line in err.strip().splitlines() if line.startswith("[error: ")]
    assert line.startswith("[error: the API answered 500, still after 2 retries: api_error: "
                           "litellm.InternalServerError: ")
    assert line.endswith(f"characters in all]; the endpoint at {canned.host}, or the server "
                         "behind it, failed on this request: its log says why; try again, or "
                         "another MODEL_ID or ANTHROPIC_BASE_URL]")
    assert len(line) < 700 and len(canned.requests) == 3


@pytest.mark.parametrize(("version", "name"), [("v1", "v1_litellm_llama_server"),
                                               ("v5", "v5_litellm_llama_server"),
                                               ("v1", "v1_litellm_llama_cpp_python_chatml")])
def test_a_small_model_behind_litellm_answered_in_prose_and_the_line_says_the_count_is_partial(
    canned, make_agent, capsys, version, name
):
    """llama.cpp's server left the tools out of the prompt (its template has none); with
    --chat_format chatml llama-cpp-python left out every message whose content is a list of
    blocks, the task too, and the model greeted an empty conversation."""
    header, requests, replies = recorded(name)
    assert "LiteLLM's proxy (OpenAI-format route)" in header["upstream"]
    # the tools and the automatic choice went out with every request...
    assert all(request["tool_choice"] == {"type": "auto"} and request["tools"]
               for request in requests)
    # ...and the model never called one: every block it sent is text
    blocks = [event["content_block"]["type"] for reply in replies for event in reply
              if event["type"] == "content_block_start"]
    assert blocks and set(blocks) == {"text"}
    assert replayed_through(canned, make_agent, name) == 0
    out = capsys.readouterr().out
    assert "> bash" not in out and "> write_file" not in out
    [usage] = [line for line in out.splitlines() if line.startswith("  [tokens: ")]
    # LiteLLM's message_start said 0 for the cache; its message_delta, which counts, said nothing
    assert "; no cache figures: the endpoint sent none; " in usage
    counted, sent = re.search(r"the endpoint counted ([\d,]+) input tokens of about ([\d,]+) "
                              r"sent: a partial count, or part of the request never reached "
                              r"the model\]$", usage).groups()
    assert int(counted.replace(",", "")) * 2 < int(sent.replace(",", ""))


@once("v1")
def test_llama_servers_own_messages_route_reports_cache_reads_and_no_cache_writes(
    canned, make_agent, capsys
):
    _, _, replies = recorded("v1_llama_server_messages")
    start = replies[0][0]["message"]["usage"]
    assert "cache_creation_input_tokens" not in start  # what the server sent...
    assert replayed_through(canned, make_agent, "v1_llama_server_messages") == 0
    [usage] = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith("  [tokens: ")]
    assert ", cache write not reported, cache read " in usage  # ...is not shown as 0


@once("v1")
def test_litellm_ends_a_reply_its_backend_dropped_as_if_it_were_complete(
    canned, make_agent, capsys
):
    """The docs page says so: the backend stopped while it streamed, and LiteLLM still sent
    end_turn and message_stop. Nothing in the stream tells a cut reply from a whole one, so
    the turn ends as a success: only the gateway's log says why."""
    header, _, [reply] = recorded("v1_litellm_backend_stops")
    assert header["upstream"].endswith(", stopped while it answered")
    kinds = [event["type"] for event in reply]
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert reply[-2]["delta"]["stop_reason"] == "end_turn"
    assert replayed_through(canned, make_agent, "v1_litellm_backend_stops") == 0
    assert capsys.readouterr().err == ""


@once("v1")
def test_litellm_may_instead_send_an_error_event_and_then_500_and_the_run_ends_in_one_line(
    canned, make_agent, capsys
):
    """The same session run again: this time LiteLLM sent `event: error` inside its 200 (the
    backend's connection failed), the script sent the request again as it does after a 529,
    and LiteLLM answered 500 to it and to the SDK's two retries. One line then names the
    gateway's host; the run exits 1."""
    header, _, replies = recorded("v1_litellm_backend_stops_error")
    assert header["upstream"].endswith(", stopped while it answered")
    assert [event["type"] for event in replies[0]][-1] == "error"
    assert [reply["status"] for reply in replies[1:]] == [500, 500, 500]
    assert replayed_through(canned, make_agent, "v1_litellm_backend_stops_error") == 1
    assert len(canned.requests) == 4
    err = capsys.readouterr().err
    assert "[retrying: the stream broke off (api_error: litellm.APIConnectionError: " in err
    [line] = [line for line in err.splitlines() if line.startswith("[error: ")]
    assert line.startswith("[error: the API answered 500, still after 2 retries: ")
    assert line.endswith(f"; the endpoint at {canned.host}, or the server behind it, failed on "
                         "this request: its log says why; try again, or another MODEL_ID or "
                         "ANTHROPIC_BASE_URL]")


# -- v5's compaction, where the endpoint counts little or nothing --


def test_compaction_takes_the_requests_own_size_where_the_count_is_far_below_it():
    """LiteLLM's OpenAI-format route counted 15 input tokens of a 168-token prompt: a history
    measured by such counts would never reach COMPACT_AT, and fill the context instead."""
    partial = ReportedUsage.construct(input_tokens=15, output_tokens=9, sent_estimate=700)
    assert prompt_size(partial) == 700
    none = ReportedUsage.construct(output_tokens=9, sent_estimate=700)  # no input figure
    assert prompt_size(none) == 700
    # at half of the estimate the count is believed, cache figures included (Claude's counts)
    edge = ReportedUsage.construct(input_tokens=200, cache_creation_input_tokens=100,
                                   cache_read_input_tokens=50, output_tokens=9, sent_estimate=700)
    assert prompt_size(edge) == 350
    claude = ReportedUsage.construct(input_tokens=3, cache_read_input_tokens=900,
                                     cache_creation_input_tokens=40, sent_estimate=800)
    assert prompt_size(claude) == 943  # a count above the estimate is the count


READ_NOTES = [START, *tool_block('{"path": "notes.txt"}', name="read_file")]


@once("v5")
@pytest.mark.parametrize("reported", [{}, {"input_tokens": 15}], ids=["no count", "15"])
def test_v5_compacts_by_the_requests_size_when_the_endpoint_counts_no_input(
    canned, make_agent, capsys, reported
):
    start = {**START, "message": {**START["message"], "usage": {"output_tokens": 0}}}
    canned.replies += [[start, *READ_NOTES[1:], delta("tool_use", **reported), STOP],
                       [start, *text_block("We read notes.txt."), delta("end_turn"), STOP],
                       [start, *text_block("Done."), delta("end_turn"), STOP]]
    Path("notes.txt").write_text("the deploy key is K-7731\n", encoding="utf-8")
    agent = make_agent(ANTHROPIC_BASE_URL=f"http://{canned.host}", COMPACT_AT=1000)
    assert agent.run_turn([], "read notes.txt") == 0
    out = capsys.readouterr().out
    summary_request = canned.requests[1]["messages"][-1]["content"][-1]["text"]
    assert summary_request == agent.SUMMARY_QUESTION
    assert "compacting (over COMPACT_AT=1,000)" in out
    fresh = canned.requests[2]["messages"]
    assert fresh[0]["content"][0]["text"].startswith("<summary>\nWe read notes.txt.")
