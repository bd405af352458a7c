"""plumbing/skills.py at the edges its mutation run found untested: where the front matter ends,
which name a skill goes by, the spec's warnings at their limits, the resource listing's words,
and the guards of a hostile file (an anchor alone, the node and byte limits exactly)."""

from types import SimpleNamespace

import pytest

from plumbing.platforms import Shell
from plumbing.skills import (
    DESCRIPTION_LIMIT,
    NAME_LIMIT,
    SKILL_FILE_LIMIT,
    YAML_NODE_LIMIT,
    SkillSkipped,
    name_problems,
    read_front_matter,
    read_skill_or_warn,
    resource_listing,
    skill_name,
    spec_problems,
)

BASH = Shell("bash", "/bin/bash")


def skill_file(tmp_path, text: str, folder: str = "my-skill"):
    skill_md = tmp_path / folder / "SKILL.md"
    skill_md.parent.mkdir()
    skill_md.write_text(text, encoding="utf-8")
    return skill_md


# -- the front matter and the body --
def test_the_closing_fence_may_have_trailing_spaces_and_the_body_starts_right_after_it(tmp_path):
    text = "---\nname: my-skill\ndescription: d\n---  \nStep one.\nStep 2.\n"
    skill_md = skill_file(tmp_path, text)
    assert read_front_matter(skill_md) == ({"name": "my-skill", "description": "d"},
                                           "Step one.\nStep 2.")


def test_an_indented_fence_does_not_close_the_front_matter(tmp_path):
    skill_md = skill_file(tmp_path, "---\nname: my-skill\ndescription: d\n  ---\nbody\n")
    with pytest.raises(SkillSkipped, match="has no front matter"):
        read_front_matter(skill_md)


def test_a_file_that_is_not_utf_8_is_skipped_with_the_reason(tmp_path, capsys):
    skill_md = tmp_path / "my-skill" / "SKILL.md"
    skill_md.parent.mkdir()
    skill_md.write_bytes(b"---\nname: my-skill\ndescription: caf\xe9\n---\n")
    assert read_skill_or_warn(read_front_matter, skill_md) is None
    assert "my-skill/SKILL.md cannot be read: 'utf-8' codec can't decode byte 0xe9" in (
        capsys.readouterr().err)


def test_a_file_of_exactly_the_byte_limit_is_read(tmp_path):
    head = "---\nname: my-skill\ndescription: d\n---\n"
    skill_md = skill_file(tmp_path, head + "x" * (SKILL_FILE_LIMIT - len(head)))
    assert len(read_front_matter(skill_md)[1]) == SKILL_FILE_LIMIT - len(head)


# -- which name a skill goes by --
@pytest.mark.parametrize(("fields", "name"), [
    ({"name": "pdf-tools"}, "pdf-tools"),  # the name it declares, not its folder's
    ({}, "pdf"),
    ({"name": ""}, "pdf"),
    ({"name": 5}, "pdf"),  # YAML read `name: 5` as a number
])
def test_a_skill_goes_by_its_declared_name_or_else_its_folders(fields, name):
    assert skill_name(fields, "pdf") == name


def test_a_declared_name_unfit_for_the_catalogue_is_refused_whatever_its_folder(tmp_path):
    skill_md = skill_file(tmp_path, "---\nname: My Skill\ndescription: d\n---\n")
    with pytest.raises(SkillSkipped, match="has the name 'My Skill'; use only lowercase"):
        read_front_matter(skill_md)


# -- the specification's warnings, each at its limit --
def test_a_name_that_is_not_a_string_is_warned_of_and_the_folder_named():
    assert spec_problems({"name": 5, "description": "d"}, "pdf") == [
        "has no usable name; its folder name 'pdf' is used"]


def test_a_description_of_exactly_the_limit_is_no_problem_and_one_more_is():
    assert spec_problems({"name": "pdf", "description": "d" * DESCRIPTION_LIMIT}, "pdf") == []
    assert spec_problems({"name": "pdf", "description": "d" * (DESCRIPTION_LIMIT + 1)}, "pdf") == [
        f"has a description of {DESCRIPTION_LIMIT + 1:,} characters; only the first "
        f"{DESCRIPTION_LIMIT:,} are used"]


def test_a_name_of_exactly_the_limit_is_no_problem_and_one_more_is():
    assert name_problems("a" * NAME_LIMIT, "a" * NAME_LIMIT) == []
    longer = "a" * (NAME_LIMIT + 1)
    assert name_problems(longer, longer) == [
        f"has a name of {NAME_LIMIT + 1} characters; the limit is {NAME_LIMIT}"]


def test_each_name_rule_says_which_one_the_name_breaks():
    assert name_problems("pdf_tools", "pdf_tools") == [
        "has the name 'pdf_tools'; use only lowercase letters, digits and hyphens"]
    for name in ("-pdf", "pdf-"):
        assert name_problems(name, name) == [
            f"has the name {name!r}; it must not start or end with a hyphen"]


# -- the lines after a skill's instructions --
def folder_with(tmp_path, monkeypatch, *names: str) -> SimpleNamespace:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "pdf"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\n---\n")
    for name in names:
        (folder / name).write_text("12345")
    return SimpleNamespace(folder=folder)


def test_a_skill_with_no_other_files_says_so(tmp_path, monkeypatch):
    skill = folder_with(tmp_path, monkeypatch)
    assert resource_listing(skill, 2, BASH) == [
        "Skill folder: pdf (its SKILL.md has these instructions in full, if they were cut "
        "above). It has no other files."]


def test_exactly_as_many_files_as_the_limit_are_all_listed_and_one_more_is_counted(
    tmp_path, monkeypatch
):
    skill = folder_with(tmp_path, monkeypatch, "a.md", "b.md")
    lines = resource_listing(skill, 2, BASH)
    assert lines[0].endswith(
        "above). Its other files are not loaded; when the instructions call for one, read it with "
        "read_file at the folder plus the path listed, e.g. pdf/a.md")
    assert lines[1:] == ["  a.md (5 bytes)", "  b.md (5 bytes)"]
    (skill.folder / "c.md").write_text("1")
    assert resource_listing(skill, 2, BASH)[3:] == [
        "  [1 more; list them with bash: find pdf -type f]"]


# -- YAML that could expand: anchors refused, the node limit exact --
def test_an_anchor_is_refused_even_with_no_alias_to_it(tmp_path):
    skill_md = skill_file(tmp_path, "---\nname: my-skill\ndescription: &d a description\n---\n")
    with pytest.raises(SkillSkipped, match=r"anchors and aliases \(& and \*\) are not allowed"):
        read_front_matter(skill_md)


def test_a_front_matter_of_exactly_the_node_limit_loads_and_one_more_node_does_not(tmp_path):
    # the mapping, two nodes for each of name and description, "list" and its sequence: 7
    items = "".join(f"  - {number}\n" for number in range(YAML_NODE_LIMIT - 7))
    skill_md = skill_file(tmp_path, f"---\nname: my-skill\ndescription: d\nlist:\n{items}---\n")
    assert len(read_front_matter(skill_md)[0]["list"]) == YAML_NODE_LIMIT - 7
    skill_md.write_text(f"---\nname: my-skill\ndescription: d\nlist:\n{items}  - 1\n---\n")
    with pytest.raises(SkillSkipped, match=f"more than {YAML_NODE_LIMIT:,} YAML nodes"):
        read_front_matter(skill_md)
