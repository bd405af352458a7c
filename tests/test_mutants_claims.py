"""The build's checks of what a page claims (docsgen/claims.py), read as the writer who broke one
reads them: each message names the page, what it says, what the build found and what to change,
word for word, whatever side of a claim or which part of a table is wrong."""

import pytest

from docsgen.claims import FalseClaim, check_claims, check_plumbing_table, check_rows

def refusal(call, *args) -> str:
    with pytest.raises(FalseClaim) as raised:
        call(*args)
    return str(raised.value)


@pytest.mark.parametrize("claim", ["missing >= 1", "1 <= missing"], ids=["left", "right"])
def test_an_unknown_figure_on_either_side_is_named_with_the_page_and_the_claim(claim):
    assert refusal(check_claims, f"A sentence. <!-- check: {claim} -->", {}, "p.md") == (
        f"p.md claims `{claim}`, but 'missing' is neither a number nor a figure docsgen/numbers.py "
        "makes")


def test_a_false_claim_says_what_the_build_made_and_what_to_rewrite():
    page = "It reads all it could. <!-- check: x == y -->"
    assert refusal(check_claims, page, {"x": "1,009", "y": "1,010"}, "p.md") == (
        "p.md says something only true if x == y, and the build made {'x': '1,009', "
        "'y': '1,010'}: rewrite the sentence beside the claim, then the claim")


TABLE = """\
| Module | What the lesson uses from it | What it guards against |
| --- | --- | --- |
| [`budget`](https://x/plumbing/budget.py) | `clip` | a result too large |
| [`turns`](https://x/plumbing/turns.py) | `CallBudget`, `TurnLimit` | a turn without end |
"""
SOURCE = """\
from plumbing.budget import clip, cut_note
from plumbing.screen import Screen, fit
from plumbing.turns import CallBudget
from . import nothing_of_plumbing
"""


def test_a_plumbing_table_names_every_name_left_out_or_extra_and_every_module_without_a_row():
    assert refusal(check_plumbing_table, TABLE, "v9.py", SOURCE, "v9.md") == (
        "v9.md's plumbing table is not v9.py's import block: "
        "budget: lists nothing that v9.py does not import, leaves out ['cut_note'] that it does; "
        "no row for screen (v9.py imports Screen, fit); "
        "turns: lists ['TurnLimit'] that v9.py does not import, leaves out nothing that it does")


ROWS = """\
<!-- rows: exercises -->
| # | Base |
| --- | --- |
| 1 | a |
| 4 | b |
|5|c|
"""


def test_a_marked_table_says_each_row_missing_and_each_row_not_there():
    assert refusal(check_rows, ROWS, {"exercises": ["1", "2", "3"], "scripts": []}, "w.md") == (
        "w.md: the table marked `rows: exercises` lists 1, 4, 5; the files give 1, 2, 3 "
        "(missing: 2, 3; not there: 4, 5; else the order differs)")


def test_a_marked_table_out_of_order_or_empty_says_so():
    assert refusal(check_rows, ROWS, {"exercises": ["1", "5", "4"]}, "w.md") == (
        "w.md: the table marked `rows: exercises` lists 1, 4, 5; the files give 1, 5, 4 "
        "(missing: none; not there: none; else the order differs)")
    empty = "<!-- rows: exercises -->\n| # | Base |\n| --- | --- |\n"
    assert refusal(check_rows, empty, {"exercises": ["1"]}, "w.md") == (
        "w.md: the table marked `rows: exercises` lists nothing; the files give 1 "
        "(missing: 1; not there: none; else the order differs)")


def test_a_table_marked_with_a_kind_the_build_does_not_list_names_the_kinds_it_does():
    marked = ROWS.replace("rows: exercises", "rows: lessons")
    assert refusal(check_rows, marked, {"scripts": [], "exercises": []}, "w.md") == (
        "w.md: a table claims one row per 'lessons', which the build does not list (it lists "
        "exercises, scripts)")
