"""plumbing/budget.py's cut_short: the one cut of a text held to a length, with its mark."""

import pytest

from plumbing.budget import cut_short

@pytest.mark.parametrize(
    ("text", "limit", "mark", "cut"),
    [
        ("abcdef", 6, "…", "abcdef"),  # at the limit: as it is
        ("abcdefg", 6, "…", "abcde…"),  # one over: the mark takes the last place
        ("abcdefg", 6, " [7]", "ab [7]"),  # a longer mark leaves less of the text
        ("", 0, "…", ""),
        ("日本語のテキスト", 5, "…", "日本語の…"),  # characters, not bytes
    ],
)
def test_a_text_is_kept_whole_or_cut_to_its_limit_mark_included(text, limit, mark, cut):
    assert cut_short(text, limit, mark) == cut
    assert len(cut_short(text, limit, mark)) <= limit
