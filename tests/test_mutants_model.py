"""plumbing/model.py: the refusals the mutation run of 2026-11-28 found no test telling apart,
through stream_reply() and the real SDK against the scripted server (test_model.py's way).

A breakpoint of the system prompt refused by its path (as a gateway in front of another cloud
names it), an error that names two fields, and a refusal of a field the request no longer has.
"""

import anthropic
import pytest

from plumbing.model import RequestOptions, stream_reply
from plumbing.screen import Screen
from tests.agents import BASH_TOOL

MODEL = "claude-sonnet-5-5"
SYSTEM = [{"type": "text", "text": "You are a careful agent."},
          {"type": "text", "text": "Work in this folder.", "cache_control": {"type": "ephemeral"}}]
REQUEST = {"model": MODEL, "max_tokens": 1_000, "tools": [BASH_TOOL], "system": SYSTEM,
           "messages": [{"role": "user", "content": "List the files."}]}


@pytest.fixture
def client(scripted_api) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=scripted_api.start(), api_key="k", max_retries=0)


@pytest.fixture
def screen() -> Screen:
    return Screen()


def test_a_refused_system_breakpoint_drops_caching_and_keeps_the_system_prompts_text(
    scripted_api, client, screen, capsys
):
    """The error names `system.1.cache_control`: caching as a whole goes, the system's own
    breakpoint with it, and the system prompt's blocks are sent as they were without it."""
    refusal = {"status": 400, "message": "system.1.cache_control: Extra inputs are not permitted"}
    scripted_api.play({"turns": [{"error": refusal}, {"text": "One."}, {"text": "Two."}]})
    options = RequestOptions(screen)
    assert stream_reply(client, REQUEST, options, screen).content[0].text == "One."
    assert stream_reply(client, REQUEST, options, screen).content[0].text == "Two."
    first, *later = (request.body for request in scripted_api.requests)
    assert first["system"] == SYSTEM and first["cache_control"] == {"type": "ephemeral"}
    assert len(later) == 2
    for body in later:
        assert body["system"] == [{"type": "text", "text": "You are a careful agent."},
                                  {"type": "text", "text": "Work in this folder."}]
        assert "cache_control" not in body
        assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert capsys.readouterr().err.strip() == (
        "[the endpoint refused cache_control (no prompt caching: every call pays for the whole "
        "prompt); going on without it]")


def test_an_error_naming_a_display_already_gone_and_then_caching_drops_caching(
    scripted_api, client, screen, capsys
):
    """LiteLLM's wording lists every field it will not take; the display, dropped before, is
    passed over and the next field it names is the one dropped."""
    display = {"status": 400, "message": "thinking.display: Extra inputs are not permitted"}
    both = {"status": 400, "message": "does not support parameters: "
                                      "['thinking.display', 'cache_control']"}
    scripted_api.play({"turns": [{"error": display}, {"error": both}, {"text": "Done."}]})
    request = {**REQUEST, "system": "You are a careful agent."}
    options = RequestOptions(screen)
    assert stream_reply(client, request, options, screen).content[0].text == "Done."
    last = scripted_api.requests[-1].body
    assert last["thinking"] == {"type": "adaptive"} and "cache_control" not in last
    assert len(scripted_api.requests) == 3


def test_a_refusal_of_the_display_after_thinking_was_dropped_is_the_endpoints_error(
    scripted_api, client, screen, capsys
):
    """Nothing of ours is left to drop: the error is raised as it came, not retried."""
    thinking = {"status": 400, "message": "thinking: Extra inputs are not permitted"}
    display = {"status": 400, "message": "thinking.display: Extra inputs are not permitted"}
    scripted_api.play({"turns": [{"error": thinking}, {"error": display}]})
    with pytest.raises(anthropic.BadRequestError, match="thinking.display: Extra inputs"):
        stream_reply(client, REQUEST, RequestOptions(screen), screen)
    assert ["thinking" in request.body for request in scripted_api.requests] == [True, False]
