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


def recorded(name: str) -> tuple[dict, list[dict], list[list[dict]]]:
    """A recording's header, its requests, and the events of each reply, as they came."""
    lines = [json.loads(line) for line in (REAL / f"{name}.jsonl").read_text(
        encoding="utf-8").splitlines()]
    requests = [line["body"] for line in lines if line["kind"] == "request"]
    replies: list[list[dict]] = [[] for _ in requests]
    for line in lines:
        if line["kind"] == "event":
            replies[line["exchange"] - 1].append(line["data"])
    return lines[0], requests, replies


def replayed_through(canned: Canned, make_agent, name: str) -> int:
    """The current script, one turn, answered with the replies the real stack sent."""
    header, _, replies = recorded(name)
    canned.replies += replies
    agent = make_agent(ANTHROPIC_BASE_URL=f"http://{canned.host}", **header["settings"])
    return agent.run_turn([], header["task"])


@pytest.mark.parametrize(("version", "name"), [("v1", "v1_litellm_llama_server"),
                                               ("v5", "v5_litellm_llama_server")])
def test_a_small_model_behind_litellm_answered_in_prose_and_the_line_says_the_count_is_partial(
    canned, make_agent, capsys, version, name
):
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
