"""The four tool handlers of every version, as the model reads their results (each test written
for a mutant of the lessons-tools target that survived)."""

from __future__ import annotations

import pytest

from tests.agents import VERSIONS, versions_from

@pytest.mark.parametrize("version", VERSIONS)
def test_a_read_past_the_end_names_the_file_its_length_and_the_line_asked_for(
    version, make_agent, tmp_path
):
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    agent = make_agent()
    assert agent.read_file("a.txt", offset=20) == "[a.txt has 10 lines; nothing from line 20]"


@pytest.mark.parametrize("version", versions_from("v5"))
def test_each_file_written_or_edited_is_kept_once_in_its_order_for_the_summary(
    version, make_agent, tmp_path
):
    (tmp_path / "a.txt").write_text("alpha\n")
    agent = make_agent()
    assert agent.write_file("b.txt", "beta\n") == "wrote 5 characters to b.txt"
    assert agent.edit_file("a.txt", "alpha", "ALPHA") == "edited a.txt"
    assert agent.write_file("b.txt", "beta, again\n") == "wrote 12 characters to b.txt"
    assert agent.what_must_survive().endswith("Files changed: b.txt, a.txt")
