"""The skills of v4, v5 and v6 as the model and the user read them: the Skill tool word for word,
the line that names the skills loaded (each test written for a mutant of the lessons-skills target
that survived)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents import versions_from

def write_skill(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Use for {name}.\n---\n"
                                          f"The steps of {name}.\n", encoding="utf-8")


@pytest.mark.parametrize("version", versions_from("v4"))
def test_the_skill_tool_is_offered_word_for_word_with_the_names_in_order(
    version, scripted_api, make_agent, tmp_path, capsys
):
    for name in ("review-diff", "commit-message"):
        write_skill(tmp_path / "skills-here", name)
    agent = make_agent()
    agent.install_skills(agent.load_skills([tmp_path / "skills-here"]))
    assert "[skills: commit-message, review-diff]\n" in capsys.readouterr().out
    scripted_api.play({"turns": [{"text": "ok"}]})
    assert agent.run_turn([], "hi") == 0
    assert scripted_api.requests[0].body["tools"][-1] == {
        "name": "Skill",
        "description": (
            "Load a skill named in the system prompt's catalogue. Returns its instructions in "
            "<skill_content>, then the skill's folder and its other files (names and sizes, not "
            "contents). Call it before starting a task that matches the skill's description."),
        "input_schema": {
            "type": "object",
            "properties": {"name": {"type": "string", "enum": ["commit-message", "review-diff"]}},
            "required": ["name"], "additionalProperties": False},
    }


@pytest.mark.parametrize("version", versions_from("v5"))
def test_each_skill_loaded_is_kept_once_in_its_order_for_the_summary(version, make_agent, tmp_path):
    for name in ("review-diff", "commit-message"):
        write_skill(tmp_path / "skills-here", name)
    agent = make_agent()
    agent.install_skills(agent.load_skills([tmp_path / "skills-here"]))
    for name in ("review-diff", "commit-message", "review-diff"):
        assert agent.activate_skill(name).startswith(f'<skill_content name="{name}">\n')
    assert agent.what_must_survive().endswith(
        "Skills loaded (call Skill again for their instructions): review-diff, commit-message")
