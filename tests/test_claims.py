"""Sentences about a figure are checked against the figure by the build (docsgen/claims.py), and
so are the chapter's plumbing table and the facts a page states about the scripts' output.

A claim sits beside its sentence as `<!-- check: caching.read == caching.limit -->`. These tests
read the claims of the real pages, check them against the figures of the last build, plant a
drift of a figure and see the build's check refuse it, and check that both languages make the
same claims.
"""

import json

import pytest
from mkdocs.config import load_config
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from docsgen.claims import (
    ROWS,
    FalseClaim,
    check_claims,
    check_plumbing_table,
    check_rows,
    claims_of,
    listed_rows,
    plumbing_imports,
)
from docsgen.generated import NUMBERS
from docsgen.hooks import on_page_markdown
from docsgen.numbers import count_numbers, unknown_skill_error
from scripted import ROOT, SCRIPTS

PAGES = sorted(path.name for path in (ROOT / "docs_en").glob("*.md"))
LANGUAGES = ["en", "ja"]


def page_text(language: str, page: str) -> str:
    return (ROOT / f"docs_{language}" / page).read_text(encoding="utf-8")


def test_a_true_claim_leaves_the_page_without_its_comment_and_a_paragraph_whole():
    page = ("It reads {{ x }} of {{ y }}: all of it.\n<!-- check: x == y -->\nThe next line.\n"
            "Inline <!-- check: x >= 500 --> too.\n")
    assert check_claims(page, {"x": "1,010", "y": "1,010"}, "p.md") == (
        "It reads {{ x }} of {{ y }}: all of it.\nThe next line.\nInline  too.\n")


@pytest.mark.parametrize(
    ("claim", "numbers", "message"),
    [
        ("x == y", {"x": "1,009", "y": "1,010"}, r"p.md says something only true if x == y, "
                                                  r"and the build made \{'x': '1,009', 'y'"),
        ("x < 0.5", {"x": "50.0%"}, r"only true if x < 0.5"),
        ("x > 0", {"x": "0"}, r"only true if x > 0"),
        ("missing >= 1", {}, r"'missing' is neither a number nor a figure"),
        ("x is big", {"x": "1"}, r"cannot read the claim `x is big`"),
    ],
    ids=["unequal", "a share", "the edge", "an unknown figure", "unreadable"],
)
def test_a_false_or_unreadable_claim_stops_the_build_naming_page_claim_and_figures(
    claim, numbers, message
):
    with pytest.raises(FalseClaim, match=message):
        check_claims(f"Some sentence. <!-- check: {claim} -->\n", numbers, "p.md")


@pytest.mark.parametrize("page", PAGES)
def test_both_languages_make_the_same_claims(page):
    assert claims_of(page_text("ja", page)) == claims_of(page_text("en", page))


@pytest.fixture
def built_numbers(built_site) -> dict[str, str]:
    return json.loads(NUMBERS.read_text(encoding="utf-8"))


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_claim_holds_for_the_figures_of_the_build(built_numbers, language):
    claimed = [page for page in PAGES if claims_of(page_text(language, page))]
    assert {"v1.md", "context-budget.md"} <= set(claimed)
    for page in claimed:
        check_claims(page_text(language, page), built_numbers, page)


@pytest.mark.parametrize(
    ("figure", "drifted"),
    [
        ("caching.read", lambda numbers: f"{int(numbers['caching.limit'].replace(',', '')) - 1:,}"),
        ("v1.demo_first_write", lambda numbers: "0"),  # the first call caches nothing again
    ],
    ids=["the cache misses a call", "the first call is not cached"],
)
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_planted_drift_of_a_figure_fails_the_build(built_numbers, language, figure, drifted):
    drift = {**built_numbers, figure: drifted(built_numbers)}
    refused = f"context-budget.md says something only true if .*{figure}"
    with pytest.raises(FalseClaim, match=refused):
        check_claims(page_text(language, "context-budget.md"), drift, "context-budget.md")


# -- the chapter's plumbing table, against its script's import block --


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_v1_plumbing_table_names_exactly_what_v1_imports(language):
    source = (ROOT / SCRIPTS["v1"]).read_text(encoding="utf-8")
    check_plumbing_table(page_text(language, "v1.md"), SCRIPTS["v1"], source, "v1.md")


TABLE = """\
| Module | What the lesson uses from it | What it guards against |
| --- | --- | --- |
| [`budget`](https://x/plumbing/budget.py) | `clip`, `cut_note` | a result too large |
| [`turns`](https://x/plumbing/turns.py) | `CallBudget` | a turn without end |
"""
SOURCE = """\
from plumbing.budget import clip
from plumbing.screen import Screen
from plumbing.turns import CallBudget
"""


def test_a_plumbing_table_that_drifts_from_the_import_block_stops_the_build():
    assert plumbing_imports(SOURCE) == {"budget": ["clip"], "screen": ["Screen"],
                                        "turns": ["CallBudget"]}
    with pytest.raises(FalseClaim) as raised:
        check_plumbing_table(TABLE, "v9.py", SOURCE, "v9.md")
    assert str(raised.value) == (
        "v9.md's plumbing table is not v9.py's import block: budget: lists ['cut_note'] that "
        "v9.py does not import, leaves out nothing that it does; no row for screen (v9.py "
        "imports Screen)"
    )
    check_plumbing_table("no table here", "v9.py", SOURCE, "v9.md")  # a page without one


# -- how many scripts and exercises: the sentences' counts and the tables that list them all --


def test_the_counts_of_scripts_and_exercises_come_from_the_files():
    assert count_numbers() == {"versions.count": str(len(SCRIPTS)), "workshop.exercises": "8"}
    assert listed_rows()["scripts"][-1] == "`v6_mcp.py`"
    assert listed_rows()["exercises"] == ["1", "2", "3", "4", "5", "6", "7", "8"]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_every_count_of_scripts_or_exercises_a_page_states_holds(language, page):
    """Without a build: the claims on these two figures, and every table marked as listing all."""
    text = page_text(language, page)
    for claim in claims_of(text):
        if claim.split()[0] in count_numbers():
            check_claims(f"<!-- check: {claim} -->", count_numbers(), page)
    check_rows(text, listed_rows(), page)


def test_the_pages_that_list_every_script_or_exercise_say_so_in_both_languages():
    for language in LANGUAGES:
        marked = {page: [match["kind"] for match in ROWS.finditer(page_text(language, page))]
                  for page in ("index.md", "workshop.md")}
        assert marked == {"index.md": ["scripts"], "workshop.md": ["exercises", "exercises"]}
        assert "versions.count == 6" in claims_of(page_text(language, "index.md"))


MARKED = """\
Before.
<!-- rows: exercises -->
| # | Base |
| --- | --- |
| 1 | `v1_basic.py` |
| 3 | `v2_planning.py` |

After.
"""


def test_a_table_marked_as_listing_every_exercise_stops_the_build_when_one_is_missing():
    with pytest.raises(FalseClaim) as raised:
        check_rows(MARKED, {"exercises": ["1", "2", "3"]}, "w.md")
    assert str(raised.value) == (
        "w.md: the table marked `rows: exercises` lists 1, 3; the files give 1, 2, 3 (missing: 2; "
        "not there: none; else the order differs)")
    shown = check_rows(MARKED, {"exercises": ["1", "3"]}, "w.md")
    assert shown == MARKED.replace("<!-- rows: exercises -->\n", "")
    with pytest.raises(FalseClaim, match="one row per 'scripts', which the build does not list"):
        check_rows(MARKED.replace("exercises", "scripts"), {"exercises": ["1", "3"]}, "w.md")


# -- facts a page states about the scripts' output --


def test_the_v1_chapter_says_help_ends_with_the_settings_in_effect_after_the_keys():
    """What --help prints last is checked where it runs, for every version: tests/test_cli.py's
    test_help_names_the_model_and_max_tokens_in_effect_from_the_code."""
    assert "just before the settings in\neffect" in page_text("en", "v1.md")
    assert "最後のいま有効な設定の直前に、同じキー操作を表示します" in page_text("ja", "v1.md")
    assert "ends with the same keys" not in page_text("en", "v1.md")


def test_the_skill_error_v4_shows_names_every_skill_of_the_demos_tool():
    skill = {"name": "Skill", "input_schema": {
        "type": "object", "properties": {"name": {"enum": ["a-one", "b-two", "c-three"]}}}}
    recording = [{"raw": json.dumps({"tools": [skill]})}]
    assert unknown_skill_error(recording) == (
        "invalid input for Skill (name): 'deploy-to-prod' is not one of "
        "['a-one', 'b-two', 'c-three']")
    anything = {"name": "Skill", "input_schema": {"type": "object"}}
    with pytest.raises(ValueError, match="took the made-up name 'deploy-to-prod'"):
        unknown_skill_error([{"raw": json.dumps({"tools": [anything]})}])


def test_the_build_stops_on_a_false_claim_and_on_a_drifted_plumbing_table(built_site):
    """The checks run where the build fills in the figures: docsgen/hooks.py."""
    config = load_config(str(ROOT / "mkdocs.yml"))
    docs = ROOT / "docs_en"

    def page(name: str) -> Page:
        file = File(name, str(docs), str(built_site), use_directory_urls=True)
        return Page(None, file, config)

    with pytest.raises(PluginError, match="context-budget.md says something only true if"):
        on_page_markdown("Nothing cached. <!-- check: v1.demo_first_write == 0 -->\n",
                         page("context-budget.md"), config, Files([]))
    drifted = page_text("en", "v1.md").replace("`clip`", "`clip`, `cut_note`", 1)
    with pytest.raises(PluginError, match="v1.md's plumbing table is not v1_basic.py's"):
        on_page_markdown(drifted, page("v1.md"), config, Files([]))
    shown = on_page_markdown(page_text("en", "v1.md"), page("v1.md"), config, Files([]))
    assert "<!-- check:" not in shown and "{{ " not in shown
    without_v6 = "".join(line for line in page_text("en", "index.md").splitlines(keepends=True)
                         if not line.startswith("| `v6_mcp.py`"))
    with pytest.raises(PluginError, match="index.md: the table marked `rows: scripts` lists"):
        on_page_markdown(without_v6, page("index.md"), config, Files([]))
    shown = on_page_markdown(page_text("en", "index.md"), page("index.md"), config, Files([]))
    assert "<!-- rows:" not in shown
