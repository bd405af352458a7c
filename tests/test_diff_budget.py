"""Each version is the previous one plus one mechanism, so it may remove or change only a few of its
lines.

Added lines are free: a reader follows the new mechanism in its own section, and the rest of the
file stays the one they already know. The count matches `diff older newer | grep -c '^<'`, but uses
difflib, so it works where there is no diff command. """

import difflib
import itertools

import pytest

from tests.agents import ROOT, SCRIPTS, VERSIONS

DIFF_BUDGET = 10  # lines of the older script that the newer one may remove or change
PAIRS = list(itertools.pairwise(VERSIONS))  # consecutive versions that exist


def removed_or_changed(old: list[str], new: list[str]) -> list[str]:
    """The lines of `old` that a diff marks with '<': removed, or replaced by other lines."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [
        line
        for tag, start, end, _, _ in matcher.get_opcodes()
        if tag in ("replace", "delete")
        for line in old[start:end]
    ]


def test_the_count_matches_diff():
    old, new = ["a", "b", "c", "d"], ["a", "B", "c", "added", "d", "more"]
    assert removed_or_changed(old, new) == ["b"]
    assert removed_or_changed(old, ["d"]) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("older", "newer"), PAIRS, ids=[f"{older}-{newer}" for older, newer in PAIRS]
)
def test_each_version_removes_or_changes_few_lines_of_the_previous_one(older, newer):
    old, new = (
        (ROOT / SCRIPTS[version]).read_text(encoding="utf-8").splitlines()
        for version in (older, newer)
    )
    removed = removed_or_changed(old, new)
    assert len(removed) <= DIFF_BUDGET, (
        f"{SCRIPTS[newer]} removes or changes {len(removed)} lines of {SCRIPTS[older]} "
        f"(budget {DIFF_BUDGET}):\n" + "\n".join(removed)
    )
