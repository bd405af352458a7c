"""What a hostile folder or a hostile reply sends changes nothing: a .env in the work folder sets
no setting, escape codes in the model's text never reach the terminal, a tool input nested too
deeply to read is one short line, and v4's skill folders are no wider than they are."""

import os
from pathlib import Path

import pytest

import scripted.server
from tests.agents import call_tool, once, versions_from
from tests.test_skills import skill_md, write_skill

CONTROLS = ["\x1b", "\x07", "\x9b", "\x9d", "\x9c"]  # ESC, BEL, and the 8-bit CSI, OSC and ST
HOSTILE_TEXT = ("Title\x1b]0;pwned\x07, clipboard\x1b]52;c;cHduZWQ=\x07, clear\x9b2J, "
                "title\x9d0;pwned\x9c, end.")


def test_a_dotenv_file_in_the_work_folder_changes_no_setting(make_agent, monkeypatch, tmp_path):
    settings = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "MODEL_ID",
                "AGENT_HISTORY", "BASH_TIMEOUT", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0",
                "GIT_CONFIG_VALUE_0"]
    for name in settings:
        monkeypatch.delenv(name, raising=False)  # unset, the .env could set them
    (tmp_path / ".env").write_text(
        "ANTHROPIC_BASE_URL=http://attacker.invalid\nANTHROPIC_API_KEY=sk-attacker\n"
        "MODEL_ID=attacker-model\nAGENT_HISTORY=/tmp/rewritten\nBASH_TIMEOUT=1\n"
        "GIT_CONFIG_COUNT=1\nGIT_CONFIG_KEY_0=core.fsmonitor\nGIT_CONFIG_VALUE_0=touch pwned\n")
    agent = make_agent()  # loaded in tmp_path, the folder the agent starts in
    assert agent.BASE_URL == "https://api.anthropic.com"
    assert agent.MODEL_ID != "attacker-model" and agent.BASH_TIMEOUT != 1
    assert [name for name in settings if name in os.environ] == []


def test_escape_codes_in_the_models_text_never_reach_the_terminal(scripted_api, agent, capsys):
    scripted_api.play({"turns": [{"text": HOSTILE_TEXT}]})
    assert agent.run_turn([], "hi") == 0
    out, err = capsys.readouterr()
    assert [control for control in CONTROLS if control in out + err] == []
    assert "Title?" in out and "end." in out  # a visible mark where a sequence was


@once("v1")
def test_a_tool_input_nested_too_deeply_to_read_is_one_short_line(
    scripted_api, agent, monkeypatch, capsys
):
    """The SDK cannot parse 100,000 nested lists, and its error quotes the whole input (here
    sent in one piece, as a server may)."""
    nested = '{"path": ' + "[" * 100_000 + "]" * 100_000 + "}"
    stand_in = {"path": "nested"}  # what the scenario says; the server sends `nested` instead
    to_json = scripted.server.to_json

    def nested_input(data) -> str:
        if data == stand_in:
            return nested
        return to_json(data)

    monkeypatch.setattr(scripted.server, "to_json", nested_input)
    monkeypatch.setattr(scripted.server, "MAX_DELTAS", 1)
    scripted_api.play({"turns": [{"tool_calls": [{"name": "read_file", "input": stand_in}]}]})
    history = []
    assert agent.run_turn(history, "go") == 1
    err = capsys.readouterr().err
    assert err.count("\n") <= 2 and len(err) < 1200
    # the endpoint's stream is at fault, not the agent: the line names it, and cuts the input
    assert "sent a stream the SDK cannot read (ValueError: Unable to parse tool paramet" in err
    assert [message["role"] for message in history] == ["user"]  # the broken reply is not kept


@pytest.mark.parametrize(("tool", "extra"), [("read_file", {}), ("write_file", {"content": "x"}),
                                           ("edit_file", {"old_text": "a", "new_text": "b"})])
def test_each_versions_file_tools_keep_to_the_work_folder(scripted_api, agent, tmp_path, tool,
                                                          extra):
    """The fence is tested in test_tools.py (through v1); here, that every script uses it."""
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("a")
    result = call_tool(scripted_api, agent, tool, {"path": f"../{outside.name}", **extra})
    assert result["is_error"] and "outside the work directory" in result["content"]
    assert outside.read_text() == "a"


# -- v4: a skill's folder is exactly its folder --
@pytest.mark.parametrize("version", versions_from("v4"))
def test_a_folder_beside_a_skill_whose_name_starts_alike_is_not_the_skills(
    scripted_api, agent, tmp_path_factory
):
    skills = tmp_path_factory.mktemp("skills").resolve()
    write_skill(skills, "my-skill", skill_md())
    secret = skills / "my-skill-secrets" / "key.txt"
    secret.parent.mkdir()
    secret.write_text("the secret")
    agent.install_skills(agent.load_skills([skills]))
    result = call_tool(scripted_api, agent, "read_file", {"path": str(secret)})
    assert result["is_error"] and "outside the work directory" in result["content"]


@pytest.mark.parametrize("version", versions_from("v4"))
def test_a_long_description_is_cut_to_the_spec_limit_in_the_catalogue(agent, tmp_path_factory):
    skills = tmp_path_factory.mktemp("skills").resolve()
    description = "d" * agent.DESCRIPTION_LIMIT + "TAIL"
    write_skill(skills, "my-skill", skill_md(description=description))
    agent.install_skills(agent.load_skills([skills]))
    catalogue = agent.catalogue(agent.SKILLS)
    assert f"- my-skill: {'d' * agent.DESCRIPTION_LIMIT}\n" in catalogue
    assert "TAIL" not in catalogue


@pytest.mark.parametrize("version", versions_from("v4"))
def test_a_crowded_skill_lists_only_the_first_files(scripted_api, agent, tmp_path_factory):
    skills = tmp_path_factory.mktemp("skills").resolve()
    files = {f"references/{number:03}.md": "x" for number in range(agent.RESOURCE_LIST_LIMIT + 3)}
    write_skill(skills, "my-skill", skill_md(), files)
    agent.install_skills(agent.load_skills([skills]))
    content = call_tool(scripted_api, agent, "Skill", {"name": "my-skill"})["content"]
    listed = [line for line in content.splitlines() if line.startswith("  references/")]
    assert len(listed) == agent.RESOURCE_LIST_LIMIT
    assert listed[-1] == f"  references/{agent.RESOURCE_LIST_LIMIT - 1:03}.md (1 bytes)"
    assert content.endswith("[3 more; list them with bash: find "
                            f"{Path(skills, 'my-skill')} -type f]")
