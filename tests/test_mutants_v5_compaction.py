"""v5's compaction (v5 and v6): what the model reads of what survives, word for word, and what
/compact at the prompt sends, returns and keeps (each test written for a mutant of the
v5-compaction target that survived)."""

from __future__ import annotations

import pytest

from tests.agents import versions_from

pytestmark = pytest.mark.parametrize("version", versions_from("v5"))

READ = {"tool_calls": [{"name": "read_file", "input": {"path": "notes.txt"}}]}
SUMMARY = "We read notes.txt: the deploy key is K-7731."
HEADER = "The conversation so far was compacted into the summary above. Kept word for word:"


def test_what_survives_is_the_header_then_each_part_the_model_reads_word_for_word(
    version, make_agent
):
    agent = make_agent()
    agent.KEPT.request = "Fix a.txt"
    assert agent.what_must_survive() == f"{HEADER}\n\nThe user's latest request:\nFix a.txt"
    agent.update_todos([{"content": "Fix it", "status": "in_progress", "activeForm": "Fixing"}])
    agent.KEPT.skills_loaded[:] = ["review-diff", "commit-message"]
    agent.KEPT.files_changed[:] = ["b.txt", "a.txt"]
    assert agent.what_must_survive() == (
        f"{HEADER}\n\nThe user's latest request:\nFix a.txt\n\n"
        "The todo list:\n- [in_progress] Fix it\n\n"
        "Skills loaded (call Skill again for their instructions): review-diff, commit-message\n\n"
        "Files changed: b.txt, a.txt")


def test_slash_compact_with_an_empty_history_returns_0_and_asks_nothing(
    version, scripted_api, make_agent, capsys
):
    agent = make_agent()
    assert agent.compact_by_hand([]) == 0
    assert "[nothing to compact yet]" in capsys.readouterr().out
    assert scripted_api.requests == []


def test_slash_compact_sends_the_turns_own_system_prompt_and_tools(
    version, scripted_api, make_agent, tmp_path
):
    (tmp_path / "notes.txt").write_text("the deploy key is K-7731\n")
    agent = make_agent()
    agent.install_skills(agent.load_skills([agent.REPO_SKILLS]))  # a catalogue in the system
    summary = {"expect": {"last_user_contains": agent.SUMMARY_QUESTION}, "text": SUMMARY}
    scripted_api.play({"turns": [READ, {"text": "Read it."}, summary]})
    history = []
    assert agent.run_turn(history, "read the notes") == 0
    assert agent.compact_by_hand(history) == 0
    last_round, asked = scripted_api.requests[1:]
    # The same prefix as the turn's rounds, so the summary request reads it from the cache.
    assert asked.body["tools"] == last_round.body["tools"]
    assert asked.body["system"] == last_round.body["system"]
    assert "<available_skills>" in asked.body["system"][0]["text"]
    assert asked.body["messages"][:-1] == last_round.body["messages"] + [
        {"role": "assistant", "content": [{"type": "text", "text": "Read it."}]}]


def test_a_bug_during_slash_compact_is_one_line_and_keeps_the_history(
    version, scripted_api, make_agent, capsys
):
    agent = make_agent()
    # A lone surrogate the SDK cannot encode: the summary request fails before it is sent, as
    # no API error, the way a bug would.
    earlier = [{"role": "user", "content": [{"type": "text", "text": "caf\udce9"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "Yes."}]}]
    history = [{**message, "content": message["content"][:]} for message in earlier]
    assert agent.compact_by_hand(history) == 1
    assert capsys.readouterr().err.strip().startswith("[error: UnicodeEncodeError: ")
    assert history == earlier
    assert scripted_api.requests == []
