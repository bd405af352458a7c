"""plumbing/skills.py: a SKILL.md is a regular file in its folder, and its front matter is data
that runs nothing."""

import shutil
import subprocess

import pytest

from plumbing.platforms import Shell
from plumbing.skills import (
    YAML_NODE_LIMIT,
    SkillSkipped,
    list_files_command,
    read_front_matter,
    read_skill_or_warn,
    warn,
)
from tests.agents import symlink_or_skip

def test_a_python_tag_in_the_front_matter_runs_nothing(tmp_path):
    ran = tmp_path / "ran"
    skill_md = tmp_path / "my-skill" / "SKILL.md"
    skill_md.parent.mkdir()
    skill_md.write_text(f"---\nname: my-skill\ndescription: d\n"
                        f"x: !!python/object/apply:os.mkdir ['{ran}']\n---\nbody\n")
    with pytest.raises(SkillSkipped, match="not valid YAML"):
        read_front_matter(skill_md)
    assert not ran.exists()


def test_a_skill_md_that_links_to_a_file_elsewhere_is_skipped(tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("---\nname: my-skill\ndescription: d\n---\nthe user's notes\n")
    skill_md = tmp_path / "skills" / "my-skill" / "SKILL.md"
    skill_md.parent.mkdir(parents=True)
    symlink_or_skip(skill_md, elsewhere)
    assert read_skill_or_warn(read_front_matter, skill_md) is None
    assert capsys.readouterr().err == (f"[skill skipped: {skill_md} is a symbolic link; a SKILL.md "
                                       "must be a regular file in its skill folder]\n")


def test_a_front_matter_of_too_many_nodes_is_skipped_without_building_them(tmp_path):
    skill_md = tmp_path / "my-skill" / "SKILL.md"
    skill_md.parent.mkdir()
    items = "".join(f"  - {number}\n" for number in range(YAML_NODE_LIMIT))
    skill_md.write_text(f"---\nname: my-skill\ndescription: d\nlist:\n{items}---\nbody\n")
    with pytest.raises(SkillSkipped, match=f"more than {YAML_NODE_LIMIT:,} YAML nodes"):
        read_front_matter(skill_md)


def test_a_skill_warning_on_stderr_has_no_control_sequence(capsys):
    warn("skill skipped: evil\x1b]52;c;cHduZWQ=\x07folder\x9d0;t\x9c")
    assert capsys.readouterr().err == "[skill skipped: evil?folder?]\n"


# -- the command that lists a crowded skill's files, in the bash tool's shell --


def test_the_listing_command_for_powershell_doubles_each_of_its_quote_characters():
    """PowerShell closes a single-quoted string on ' ‘ ’ ‚ ‛ alike; a doubled one is literal."""
    folder = "C:\\Users\\me\\it's ‘my’ ‚skills‛"
    assert list_files_command(folder, Shell("PowerShell", "powershell.exe")) == (
        "Get-ChildItem -Recurse -File -Name -LiteralPath "
        "'C:\\Users\\me\\it''s ‘‘my’’ ‚‚skills‛‛'")


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_listing_command_for_bash_lists_a_folder_whatever_its_name(tmp_path):
    folder = tmp_path / "it's $HOME `x` skills"
    (folder / "references").mkdir(parents=True)
    (folder / "references" / "a.md").write_bytes(b"a")
    command = list_files_command(str(folder), Shell("bash", shutil.which("bash")))
    listed = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=True)
    assert listed.stdout == f"{folder}/references/a.md\n"
