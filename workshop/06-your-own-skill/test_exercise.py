"""Exercise 6: a skill of your own, and the model loading it. The task is in README.md.

Your skills are the folders in skills/ beside the script under test (v4 reads the skills/ folder
beside itself, wherever the script is), apart from the ones the repository ships with. The scripted
model then does what Claude would: it sees the catalogue, loads your skill, and reads a file the
skill points to. """

import re

from tests.agents import ROOT, results_sent

SHIPPED = {path.name for path in (ROOT / "skills").iterdir() if path.is_dir()}
MENTIONED_FILE = re.compile(
    r"\b(?:references|assets|scripts)/[\w./-]*\w"
)  # references/sections.md, ...
WHEN = re.compile(r"\bwhen\b|とき|時|場合", re.IGNORECASE)


def own_skills(agent) -> dict:
    """Your skills by name, as v4 loads them from beside the script."""
    own = {
        name: skill
        for name, skill in agent.load_skills([agent.REPO_SKILLS]).items()
        if name not in SHIPPED
    }
    assert own, (
        f"no skill of your own in {agent.REPO_SKILLS}: make a folder there with a SKILL.md "
        f"(the skills {sorted(SHIPPED)} ship with the repository and do not count)"
    )
    return own


def test_your_skill_is_found_and_follows_the_specification(agent, capsys):
    own_skills(agent)
    problems = [line for line in capsys.readouterr().err.splitlines() if "skill" in line]
    assert not problems, "\n".join(problems)  # v4 warns about every rule a skill breaks


def test_its_description_says_what_it_does_and_when_to_use_it(agent):
    for name, skill in own_skills(agent).items():
        assert len(skill.description) >= 40, (
            f"{name}: a description this short cannot tell the model when to use it"
        )
        assert WHEN.search(skill.description), f"{name}: say when to use the skill ('Use when ...')"


def test_the_model_finds_it_in_the_catalogue_and_loads_it_whole(scripted_api, agent):
    own = own_skills(agent)
    agent.install_skills(agent.load_skills(agent.skill_sources([])))
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [{"name": "Skill", "input": {"name": name}} for name in own]},
                {"text": "I know how to do it now."},
            ]
        }
    )
    assert agent.run_turn([], "a task your skill is for") == 0
    system = scripted_api.requests[0].body["system"]
    results = results_sent(scripted_api)
    for (name, skill), result in zip(own.items(), results, strict=True):
        assert f"\n- {name}: " in system
        assert (
            not result["is_error"]
            and f'<skill_content name="{name}">\n{skill.body}\n</skill_content>'
            in result["content"]
        ), f"{name}: the instructions did not come back whole (too long for the budget?)"


def test_each_file_it_points_to_is_there_and_the_model_can_read_it(scripted_api, agent):
    own = own_skills(agent)
    agent.install_skills(agent.load_skills(agent.skill_sources([])))
    mentioned = {
        (name, path) for name, skill in own.items() for path in MENTIONED_FILE.findall(skill.body)
    }
    assert mentioned, (
        "point the instructions to at least one file of the skill, e.g. references/checklist.md"
    )
    for name, path in sorted(mentioned):
        assert (own[name].folder / path).is_file(), (
            f"{name}: SKILL.md mentions {path}, which is not in the skill"
        )
    name, path = min(mentioned)
    wanted = f"{agent.tool_path(own[name].folder)}/{path}"
    first_line = next(
        line for line in (own[name].folder / path).read_text(encoding="utf-8").splitlines() if line
    )
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [{"name": "Skill", "input": {"name": name}}]},
                {"tool_calls": [{"name": "read_file", "input": {"path": wanted}}]},
                {"expect": {"tool_result_contains": first_line}, "text": "Done."},
            ]
        }
    )
    assert agent.run_turn([], "a task your skill is for") == 0
