"""plumbing/skills.py: a SKILL.md is a regular file in its folder, and its front matter is data
that runs nothing."""

import pytest

from plumbing.skills import (
    YAML_NODE_LIMIT,
    SkillSkipped,
    read_front_matter,
    read_skill_or_warn,
    warn,
)

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
    skill_md.symlink_to(elsewhere)
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
