"""Exercise 6: a skill of your own, and the model loading it. The task is in README.md.

Your skills are the folders in skills/ beside the script under test (v4 reads the skills/ folder
beside itself, wherever the script is), apart from the ones the repository ships with. The scripted
model then does what Claude would: it sees the catalogue, loads your skill, and reads a file the
skill points to. A test's name starts with the number of the rule it checks (test_rule3_... checks
rule 3 of README.md), and its failure says what is missing. """

import re

from plumbing.skills import tool_path
from tests.agents import ROOT, results_sent

SHIPPED = {path.name for path in (ROOT / "skills").iterdir() if path.is_dir()}
MENTIONED_FILE = re.compile(
    r"\b(?:references|assets|scripts)/[\w./-]*\w"
)  # references/sections.md, ...
# "when" or "whenever" as a word; in Japanese とき (not ときどき, "sometimes"), 場合, and
# 時 or 際 where they mean "when": followed by a particle (頼まれた時に, リリースの際に).
# Not in words such as 時間 (time), 同時に (at once), 日時 (date), 一時 (for a while),
# 実際に (in fact) or 国際 (international).
WHEN = re.compile(
    r"\bwhen(?:ever)?\b|とき(?!どき)|場合"
    r"|(?<![同日当常随臨定毎一瞬即何暫])時(?=[にはもや、,。]|$)"
    r"|(?<![国実交間手水窓])際(?=[にはのも、,])",
    re.IGNORECASE | re.MULTILINE,
)
INSTRUCTIONS_LIMIT = 5_000  # characters of SKILL.md's body


def first_words(message: dict) -> str | None:
    """The text of a message's first block: the task as the agent sent it (a dict; a reminder
    may follow it; a tool result has no text) or the model's reply as the SDK gave it."""
    block = message["content"][0]
    if isinstance(block, dict):
        return block.get("text")
    return block.text


def conversation_problem(history: list, task: str, reply: str) -> str:
    """What is wrong with the conversation a turn left, or "": it starts with the task and ends
    with the model's reply, as the API and the next turn expect."""
    first, last = history[0], history[-1]
    if first_words(first) != task:
        return f"the task is not the first message of the conversation: {first!r}"
    if first_words(last) != reply:
        return f"the turn did not end on the model's reply: {last!r}"
    return ""


def own_skills(agent, rule: int) -> dict:
    """Your skills by name, as v4 loads them from beside the script."""
    own = {
        name: skill
        for name, skill in agent.load_skills([agent.REPO_SKILLS]).items()
        if name not in SHIPPED
    }
    assert own, (
        f"rule {rule}: no skill of your own in {agent.REPO_SKILLS}: make a folder there with a "
        f"SKILL.md (the skills {sorted(SHIPPED)} ship with the repository and do not count)"
    )
    return own


def test_rule1_your_skill_has_a_name_of_its_own(agent):
    folders = {path.name for path in agent.REPO_SKILLS.glob("*") if path.is_dir()}  # none: {}
    taken = sorted(folders & SHIPPED)
    assert not taken, (
        f"rule 1: {taken} in {agent.REPO_SKILLS} has the name of a skill the repository ships; "
        "give your skill a folder and a name of its own (a copy you edit in place still counts "
        "as the shipped skill)"
    )
    own_skills(agent, rule=1)


def test_rule2_your_skill_loads_without_a_warning(agent, capsys):
    agent.load_skills([agent.REPO_SKILLS])  # first the warnings: they say why a skill is skipped
    problems = [line for line in capsys.readouterr().err.splitlines() if "skill" in line]
    assert not problems, "rule 2: v4 warns about your SKILL.md:\n" + "\n".join(problems)
    own_skills(agent, rule=2)


def test_rule3_its_description_says_what_it_does_and_when_to_use_it(agent):
    for name, skill in own_skills(agent, rule=3).items():
        assert len(skill.description) >= 40, (
            f"rule 3: {name}: a description of {len(skill.description)} characters cannot tell "
            "the model what the skill does and when to use it; write at least 40"
        )
        assert WHEN.search(skill.description), (
            f"rule 3: {name}: say when to use the skill: 'Use when ...', 'Use it whenever ...', "
            f"or in Japanese 「…とき」「…時に」「…場合」「…際に」; the description is "
            f"{skill.description!r}"
        )


def test_rule4_the_model_finds_it_in_the_catalogue_and_loads_it_whole(scripted_api, agent):
    own = own_skills(agent, rule=4)
    for name, skill in own.items():
        assert len(skill.body) <= INSTRUCTIONS_LIMIT, (
            f"rule 4: {name}: the instructions have {len(skill.body):,} characters; keep them "
            f"within {INSTRUCTIONS_LIMIT:,} and move long lists and templates into references/"
        )
    agent.install_skills(agent.load_skills(agent.skill_sources([])))
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [{"name": "Skill", "input": {"name": name}} for name in own]},
                {"text": "I know how to do it now."},
            ]
        }
    )
    history = []
    assert agent.run_turn(history, "a task your skill is for") == 0
    problem = conversation_problem(history, "a task your skill is for", "I know how to do it now.")
    assert problem == "", f"rule 4: {problem}"
    system = scripted_api.requests[0].body["system"]
    results = results_sent(scripted_api)
    for (name, skill), result in zip(own.items(), results, strict=True):
        assert f"\n- {name}: " in system, f"rule 4: {name} is not in the catalogue: {system!r}"
        assert (
            not result["is_error"]
            and f'<skill_content name="{name}">\n{skill.body}\n</skill_content>'
            in result["content"]
        ), f"rule 4: {name}: the instructions did not come back whole"


def test_rule5_each_file_it_points_to_is_there_and_the_model_can_read_it(scripted_api, agent):
    own = own_skills(agent, rule=5)
    agent.install_skills(agent.load_skills(agent.skill_sources([])))
    mentioned = {
        (name, path) for name, skill in own.items() for path in MENTIONED_FILE.findall(skill.body)
    }
    # A path under a folder the skill does not have (scripts/release.py in a skill without
    # scripts/) is the project's own file, not the skill's: it is not looked for in the skill.
    in_skill = {
        (name, path) for name, path in mentioned if (own[name].folder / path.split("/")[0]).is_dir()
    }
    for name, path in sorted(in_skill):
        assert (own[name].folder / path).is_file(), (
            f"rule 5: {name}: SKILL.md mentions {path}, which is not in the skill folder"
        )
    elsewhere = sorted(path for _, path in mentioned - in_skill)
    assert in_skill, (
        "rule 5: point the instructions to at least one file of the skill by its path under "
        "references/, assets/ or scripts/, e.g. references/checklist.md"
        + (
            f"; the paths it mentions, {elsewhere}, are under folders the skill does not have, "
            "so they count as the project's own files"
            if elsewhere
            else ""
        )
    )
    name, path = min(in_skill)
    wanted = f"{tool_path(own[name].folder)}/{path}"
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
    history = []
    assert agent.run_turn(history, "a task your skill is for") == 0
    problem = conversation_problem(history, "a task your skill is for", "Done.")
    assert problem == "", f"rule 5: {problem}"
