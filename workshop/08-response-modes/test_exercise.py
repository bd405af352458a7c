"""Exercise 8: search(query, mode=summary|detailed|full) on an MCP server, summary by default. The
task is in README.md.

Each test loads the server under test with DOCS_DIR set to a folder of its own, and talks to it
with the official MCP client, in this process: the same requests an agent's client sends over
stdio. The folder holds 59 sections that mention "cache" (a full answer of over 100,000
characters, far over every budget), one that mentions "lighthouse", and none that mention
"zeppelin".
A test's name starts with the number of the rule it checks (test_rule3_... checks rule 3 of
README.md), and its failure says what is missing.
"""

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.agents import load_script

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

MODES = ["summary", "detailed", "full"]
WARNING_CHARACTERS = 40_000  # Claude Code warns from 10,000 tokens: about 40,000 characters
FEW = 3  # the best sections a summary names and a detailed answer holds whole, at least
PAGES = ["setup.md", "usage.md", "internals.md"]
ADJECTIVES = ["Quiet", "Rapid", "Early", "Late", "Outer", "Inner", "Plain", "Shared"]
NOUNS = ["start", "import", "export", "refresh", "reload", "sync", "backup", "restore"]
FILLER = (
    "The job reads its settings, checks each row against the schema, and writes a report that "
    "the team reads the next morning. When a row is refused, the report names it and the reason. "
)
# "summary is the default" however it is put (the same words exercise 5 takes)
SUMMARY_IS_DEFAULT = re.compile(
    r"summary\W+(?:(?:is|mode|the|by|its|which)\W+){0,3}default"
    r"|default(?:s|ed)?\W+(?:(?:is|mode|to|the|of|value|a)\W+){0,3}summary"
    r"|summary[^.;\n]{0,3}(?:既定|デフォルト)|(?:既定|デフォルト)[^.;\n。]{0,8}summary",
    re.IGNORECASE,
)


def names_mode(mode: str) -> re.Pattern:
    """A note that names a mode as the model would ask for it: mode="full", mode='full',
    mode=full, `full`, "full" or full mode (the word alone, as in "the full text", is not one)."""
    return re.compile(rf"""mode\W{{0,3}}{mode}\b|["'`]{mode}["'`]|\b{mode}\s+mode""", re.I)


class Section:
    def __init__(self, page: str, heading: str, text: str, score: int):
        self.page, self.heading, self.text, self.score = page, heading, text, score


def cache_sections() -> list[Section]:
    """The 59 sections that mention "cache", in page order: each names it 1 to 9 times (never
    59), and its text starts with its heading's words, so no two texts are alike."""
    sections = []
    for number in range(59):
        heading = f"{ADJECTIVES[number // 8]} {NOUNS[number % 8]}"
        score = number * 7 % 9 + 1
        text = (
            f"The {heading.lower()} step, on {PAGES[number % 3]}. {FILLER * 8}"
            + " ".join(["The cache keeps the rows of the last run."] * score)
        )
        sections.append(Section(PAGES[number % 3], heading, text, score))
    return sections


CACHE = cache_sections()
# as search_sections() orders them: the most mentions first, then by page, then by place in it
BEST_FIRST = sorted(CACHE, key=lambda section: (-section.score, section.page, CACHE.index(section)))
LIGHTHOUSE = Section("faq.md", "Harbour lights", "The lighthouse page answers one question.", 1)


@pytest.fixture(scope="session")
def docs_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    pages = {page: [f"# {page}\n\nThis page has no word the tests search for.\n"] for page in PAGES}
    for section in CACHE:
        pages[section.page].append(f"## {section.heading}\n\n{section.text}\n")
    pages[LIGHTHOUSE.page] = [f"# FAQ\n\n## {LIGHTHOUSE.heading}\n\n{LIGHTHOUSE.text}\n"]
    for page, parts in pages.items():
        # bytes: the section sizes the budgets are tested on are the same on Windows (no \r\n)
        (folder / page).write_bytes("\n".join(parts).encode("utf-8"))
    return folder


@pytest.fixture
def server(script_path, docs_dir, monkeypatch):
    """The script under test, loaded afresh with DOCS_DIR set: its module."""
    monkeypatch.setenv("DOCS_DIR", str(docs_dir))
    return load_script(script_path)


def the_server(module) -> "MCPServer":
    # the MCP SDK is imported by the first check that talks to a server, not when pytest collects
    # this file in every run of the suite (its import costs about 2 s of CPU)
    from mcp.server.mcpserver import MCPServer  # noqa: F811

    [found] = [value for value in vars(module).values() if isinstance(value, MCPServer)]
    return found


def run_apart(talk):
    """Run a client's talk in a thread of its own, with its own event loop: the thread that runs
    the checks may have one running already (pytest plugins, a browser driver), and asyncio.run()
    refuses to start a second one there."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, talk()).result()


def call(module, **arguments) -> tuple[str, bool]:
    """What the search tool answers, as a client reads it: its text, and whether it is an
    error."""

    from mcp import Client

    async def talk():
        async with Client(the_server(module)) as client:
            return await client.call_tool("search", arguments)

    result = run_apart(talk)
    text = "".join(block.text for block in result.content if block.type == "text")
    return text, result.is_error


def answer(module, rule: int, **arguments) -> str:
    """The search tool's answer, which must not be an error."""
    text, is_error = call(module, **arguments)
    mode = arguments.get("mode", "(no mode given)")
    assert not is_error, (
        f"rule {rule}: search({arguments['query']!r}, mode={mode}) failed: {text[:300]!r}"
        + (" (see rule 1 first)" if rule != 1 and "mode" in text else "")
    )
    return text


def takes_a_mode(module, rule: int) -> None:
    """A test that asks for a mode first checks that search takes one: a server that does not
    ignores the argument and answers in full, which would read as another rule's failure."""
    modes = the_tool(module)["schema"]["properties"].get("mode", {}).get("enum")
    assert modes, f"rule {rule}: search takes no mode yet: see rule 1 first"


def the_tool(module) -> dict:
    from mcp import Client

    async def listed():
        async with Client(the_server(module)) as client:
            return (await client.list_tools()).tools

    [tool] = [tool for tool in run_apart(listed) if tool.name == "search"]
    return {"description": tool.description or "", "schema": tool.input_schema}


def budgets(module, rule: int) -> dict:
    found = getattr(module, "MODE_BUDGETS", None)
    assert isinstance(found, dict) and {"summary", "detailed"} <= set(found), (
        f"rule {rule}: the script needs MODE_BUDGETS = {{'summary': ..., 'detailed': ...}}"
        + (" (rule 2) before this rule can be checked" if rule != 2 else f"; it has {found!r}")
    )
    return found


def whole_sections(text: str, sections: list[Section]) -> list[Section]:
    """The sections whose whole text the answer holds, in the order it shows them."""
    shown = [section for section in sections if section.text in text]
    return sorted(shown, key=lambda section: text.index(section.text))


def begun_not_whole(text: str, sections: list[Section]) -> list[str]:
    """The headings of sections whose text the answer starts but does not finish."""
    return [s.heading for s in sections if s.text[:20] in text and s.text not in text]


def test_rule1_search_offers_three_modes_and_mode_is_optional(server):
    tool = the_tool(server)
    mode = tool["schema"]["properties"].get("mode", {})
    assert mode.get("enum") == MODES, (
        f"rule 1: search needs an input mode with the values {MODES}, in this order; its schema "
        f"has {mode or 'no mode'}"
    )
    assert "mode" not in tool["schema"].get("required", []), (
        "rule 1: mode must be optional (give it a default)"
    )
    said = f"{tool['description']} {mode.get('description', '')}"
    assert SUMMARY_IS_DEFAULT.search(said), (
        "rule 1: the description of search (or of its mode) must say that summary is the "
        "default, in so many words: 'summary (the default)', 'summary is the default', 'mode "
        f"defaults to summary'; it says {said.strip()!r}"
    )


def test_rule1_an_unknown_mode_is_refused(server):
    text, is_error = call(server, query="cache", mode="brief")
    assert is_error, (
        f"rule 1: search(mode='brief') must fail, as a mode the schema does not list; it "
        f"answered {text[:200]!r}"
    )


def test_rule2_the_budgets_grow_from_summary_to_detailed_and_stay_below_the_warning(server):
    found = budgets(server, rule=2)
    values = [found["summary"], found["detailed"]]
    assert all(type(value) is int and value > 0 for value in values), (
        f"rule 2: the budgets are numbers of characters; MODE_BUDGETS is {found!r}"
    )
    assert values[0] < values[1], f"rule 2: summary must get less than detailed: {found!r}"
    assert values[1] <= WARNING_CHARACTERS, (
        f"rule 2: detailed may have {values[1]:,} characters, over {WARNING_CHARACTERS:,}, about "
        "the 10,000 tokens from which Claude Code warns about a tool's answer"
    )


@pytest.mark.parametrize("mode", [None, "summary"])
def test_rule3_a_summary_counts_the_matches_and_names_the_best(server, mode):
    budget = budgets(server, rule=3)["summary"]
    given = {"mode": mode} if mode else {}
    text = answer(server, 3, query="cache", **given)
    what = "a summary" if mode else "an answer without a mode (a summary)"
    assert len(text) <= budget, (
        f"rule 3: {what} may have {budget:,} characters, a note included; it has "
        f"{len(text):,}"
    )
    assert re.search(rf"\b{len(CACHE)}\b", text), (
        f"rule 3: {what} must say how many sections match ({len(CACHE)}); it starts "
        f"{text[:200]!r}"
    )
    assert FILLER[:40] not in text, (
        f"rule 3: {what} names sections by page and heading, without their text; it holds "
        f"{text[text.index(FILLER[:40]) - 60 :][:200]!r}"
    )
    best = [section.heading for section in BEST_FIRST[:FEW]]
    places = [text.find(heading) for heading in best]
    assert -1 not in places and places == sorted(places), (
        f"rule 3: {what} must name the best {FEW} sections by heading, best first: {best}; "
        f"it starts {text[:300]!r}"
    )


def test_rule4_a_summary_ends_by_naming_detailed(server):
    takes_a_mode(server, rule=4)
    end = answer(server, 4, query="cache", mode="summary")[-300:]
    assert names_mode("detailed").search(end), (
        "rule 4: a summary must end with a note that names mode detailed, as the model would "
        f'ask for it (mode="detailed"); it ends {end!r}'
    )


def test_rule4_a_detailed_answer_that_leaves_sections_out_says_how_many_and_names_full(server):
    takes_a_mode(server, rule=4)
    text = answer(server, 4, query="cache", mode="detailed")
    left = len(CACHE) - len(whole_sections(text, CACHE))
    end = text[-300:]
    assert names_mode("full").search(end) and re.search(rf"\b{left}\b", end), (
        f"rule 4: a detailed answer that leaves {left} sections out must end with a note that "
        f'says so ({left}) and names mode full (mode="full"); it ends {end!r}'
    )


def test_rule4_a_detailed_answer_that_holds_every_section_names_no_other_mode(server):
    takes_a_mode(server, rule=4)
    text = answer(server, 4, query="lighthouse", mode="detailed")
    assert LIGHTHOUSE.text in text, (
        f"rule 4: search('lighthouse', mode=detailed) must hold its one section whole: {text!r}"
    )
    assert not names_mode("full").search(text), (
        "rule 4: a detailed answer that left nothing out must not send the model to mode full: "
        f"{text[-300:]!r}"
    )


def test_rule5_a_detailed_answer_holds_the_best_sections_whole_best_first(server):
    budget = budgets(server, rule=5)["detailed"]
    takes_a_mode(server, rule=5)
    text = answer(server, 5, query="cache", mode="detailed")
    assert len(text) <= budget, (
        f"rule 5: a detailed answer may have {budget:,} characters, a note included; it has "
        f"{len(text):,}"
    )
    cut = begun_not_whole(text, CACHE)
    assert not cut, f"rule 5: a section is shown whole or not at all; these are cut: {cut}"
    whole = [section.heading for section in whole_sections(text, CACHE)]
    best = [section.heading for section in BEST_FIRST[: len(whole)]]
    assert len(whole) >= FEW and whole == best, (
        f"rule 5: a detailed answer must hold the best sections whole, best first, at least "
        f"{FEW} (the best are {[s.heading for s in BEST_FIRST[:FEW]]}); it holds {whole}"
    )


def test_rule6_full_returns_every_section_whole_best_first(server):
    text = answer(server, 6, query="cache", mode="full")
    whole = [section.heading for section in whole_sections(text, CACHE)]
    assert whole == [section.heading for section in BEST_FIRST], (
        f"rule 6: mode full must return all {len(CACHE)} sections whole, best first, as the "
        f"server did before; it returns {len(whole)} whole ({len(text):,} characters)"
    )


@pytest.mark.parametrize("mode", [None, *MODES])
def test_rule7_a_query_that_matches_nothing_says_so_in_one_line(server, mode):
    given = {"mode": mode} if mode else {}
    text = answer(server, 7, query="zeppelin", **given).strip()
    assert "zeppelin" in text and "\n" not in text, (
        f"rule 7: search('zeppelin', mode={mode}) matches nothing and must say so in one line "
        f"that names the query; it answered {text[:300]!r}"
    )
