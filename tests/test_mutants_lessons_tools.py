"""The four tool handlers of every version, as the model reads their results (each test written
for a mutant of the lessons-tools target that survived)."""

from __future__ import annotations

import pytest

from tests.agents import VERSIONS

pytestmark = pytest.mark.parametrize("version", VERSIONS)


def test_a_read_past_the_end_names_the_file_its_length_and_the_line_asked_for(
    version, make_agent, tmp_path
):
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    agent = make_agent()
    assert agent.read_file("a.txt", offset=20) == "[a.txt has 10 lines; nothing from line 20]"
