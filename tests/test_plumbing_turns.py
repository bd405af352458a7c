"""plumbing/turns.py: the budget of model calls of one turn, and plumbing/model.py spending it."""

import anthropic
import pytest

import plumbing.model
from plumbing.model import RequestOptions, stream_reply
from plumbing.replies import AgentStopped
from plumbing.screen import Screen
from plumbing.turns import CallBudget

def test_the_call_after_the_last_one_stops_the_turn_and_a_new_turn_starts_afresh():
    calls = CallBudget(3)
    for _ in range(3):
        calls.spend()
    with pytest.raises(AgentStopped, match=r"this turn made its 3 model calls, subagents' included "
                                           r"\(MAX_CALLS_PER_TURN\)"):
        calls.spend()
    calls.start_turn()
    calls.spend()



@pytest.mark.allow_leftover_turns  # the retry is not sent: the budget stops it first
def test_a_retried_request_spends_a_call_too(scripted_api, monkeypatch):
    monkeypatch.setattr(plumbing.model, "STREAM_RETRY_DELAY", 0)
    scripted_api.play({"turns": [
        {"text": "Half of this, then", "error": {"status": 529, "midstream": True}},
        {"text": "The whole reply."}]})
    client = anthropic.Anthropic(base_url=scripted_api.start(), api_key="k")
    screen = Screen()
    request = {"model": "claude-sonnet-5-5", "max_tokens": 1000,
               "messages": [{"role": "user", "content": "Hi."}]}
    with pytest.raises(AgentStopped, match="made its 1 model calls"):
        stream_reply(client, request, RequestOptions(screen), screen, CallBudget(1))
    assert len(scripted_api.requests) == 1
