"""docs_search: an MCP server that searches this project's own docs, the gistdex case made small.

gistdex's search tool once answered one query with 48,727 tokens, against an MCP client's limit
of 25,000. The fix its design note recommends is a response mode with a small default. This
server has that mode, and it also keeps the failure within reach: its `full` answer to a common
query is far over the budget v6 holds a tool result to.

    python mcp_servers/docs_search.py            # serves MCP over stdio (what .mcp.json starts)
    python v6_mcp.py --mcp-config mcp_servers/docs.mcp.json   # v6 with this server as "docs"
    python mcp_servers/docs_search.py --sizes Q  # prints the characters of each mode's answer to Q

Its interface (kept stable: the v6 chapter, workshop 08 and bench/mcp_budget.py build on it):

    tool search_docs(query: str, mode: "summary" | "detailed" | "full" = "summary",
                     lang: "en" | "ja" | "both" = "both") -> text
      summary   how many sections and pages match, the top TOP_SECTIONS sections (page, heading,
                hits, a SNIPPET-character snippet each), and what to ask for next
      detailed  the text of those top sections, each at most SECTION_LIMIT characters
      full      every matching page, whole: no limit at all, as gistdex's answer had none
    annotations: readOnlyHint (it only reads), so v6 offers it to read-only subagents too

    answer(query, mode="summary", lang="both") -> the text the tool returns
    answer_sizes(query, lang="both") -> {mode: characters}: the figures, measured by running the
                                         search, for the docs and the bench (never typed in)
    build_server() -> the MCP server (the SDK is imported only here: the three above need none)

The docs are docs_en/ and docs_ja/ beside this folder (DOCS_SEARCH_ROOT names another project
root). A section is the text under one heading; a query matches a section when one of its words
(split on spaces, compared ignoring case) appears in it, and sections rank by how many times.
"""

import argparse
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

ROOT = Path(os.environ.get("DOCS_SEARCH_ROOT") or Path(__file__).resolve().parent.parent)
FOLDERS = {"en": "docs_en", "ja": "docs_ja"}
TOP_SECTIONS = 5  # sections in a summary or a detailed answer
SNIPPET = 160  # characters of a section shown around its first hit, in a summary
SECTION_LIMIT = 3_000  # characters of one section in a detailed answer
HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)


@dataclass
class Section:
    page: str  # e.g. docs_en/v5.md
    heading: str
    text: str
    hits: int


def pages(lang: str) -> list[Path]:
    chosen = list(FOLDERS) if lang == "both" else [lang]
    return [path for key in chosen for path in sorted((ROOT / FOLDERS[key]).glob("*.md"))]


def sections_of(path: Path) -> list[tuple[str, str]]:
    """(heading, text) for each part of a page; the part before the first heading is its top."""
    text = path.read_text(encoding="utf-8")
    starts = [match.start() for match in HEADING.finditer(text)]
    bounds = zip([0, *starts], [*starts, len(text)], strict=True)
    parts = [text[start:end] for start, end in bounds if text[start:end].strip()]
    return [(part.splitlines()[0].lstrip("# ").strip(), part) for part in parts]


def count_hits(text: str, words: list[str]) -> int:
    lowered = text.lower()
    return sum(lowered.count(word) for word in words)


def search(query: str, lang: str) -> list[Section]:
    """The matching sections, most hits first (then in page order)."""
    words = [word.lower() for word in query.split()]
    found = []
    for path in pages(lang):
        page = path.relative_to(ROOT).as_posix()
        for heading, text in sections_of(path):
            hits = count_hits(text, words)
            if hits:
                found.append(Section(page, heading, text, hits))
    return sorted(found, key=lambda section: -section.hits)


def snippet(section: Section, query: str) -> str:
    """SNIPPET characters around the first hit, on one line."""
    lowered = section.text.lower()
    places = [lowered.find(word.lower()) for word in query.split()]
    first = min([place for place in places if place >= 0], default=0)
    start = max(first - SNIPPET // 3, 0)
    return " ".join(section.text[start:start + SNIPPET].split())


def summary_answer(query: str, found: list[Section]) -> str:
    page_count = len({section.page for section in found})
    lines = [f"{len(found)} sections on {page_count} pages match {query!r}. "
             f"The top {min(len(found), TOP_SECTIONS)}:"]
    for section in found[:TOP_SECTIONS]:
        lines.append(f"- {section.page} § {section.heading} ({section.hits} hits): "
                     f"{snippet(section, query)}")
    full_size = len(full_answer(found))
    lines.append(f"Next: mode='detailed' gives these sections' text (at most {SECTION_LIMIT:,} "
                 f"characters each); mode='full' gives every matching page, {full_size:,} "
                 "characters in all: read one page with read_file instead.")
    return "\n".join(lines)


def detailed_answer(query: str, found: list[Section]) -> str:
    parts = [f"The top {min(len(found), TOP_SECTIONS)} of {len(found)} sections matching "
             f"{query!r}:"]
    for section in found[:TOP_SECTIONS]:
        text = section.text
        if len(text) > SECTION_LIMIT:
            text = (text[:SECTION_LIMIT] + f"\n[... section cut at {SECTION_LIMIT:,} of "
                    f"{len(section.text):,} characters: read {section.page} for the rest]")
        parts.append(f"=== {section.page} § {section.heading} ({section.hits} hits)\n{text}")
    return "\n\n".join(parts)


def full_answer(found: list[Section]) -> str:
    """Each matching page, whole, in the order of its best section."""
    chosen = list(dict.fromkeys(section.page for section in found))
    pages_text = [f"=== {page}\n" + (ROOT / page).read_text(encoding="utf-8") for page in chosen]
    return "\n\n".join(pages_text)


def answer(query: str, mode: str = "summary", lang: str = "both") -> str:
    found = search(query, lang)
    if not found:
        return f"No section of the docs ({lang}) matches {query!r}. Try fewer or other words."
    if mode == "summary":
        return summary_answer(query, found)
    if mode == "detailed":
        return detailed_answer(query, found)
    return full_answer(found)


def answer_sizes(query: str, lang: str = "both") -> dict[str, int]:
    """The characters of each mode's answer to query, measured by answering it."""
    return {mode: len(answer(query, mode, lang)) for mode in ("summary", "detailed", "full")}


DESCRIPTION = ("Search the project's docs (docs_en, docs_ja) for sections that mention the "
               "query's words. Start with mode='summary'; ask for 'detailed' only when you need "
               "the sections' text, and read a single page with read_file rather than 'full'.")


def search_docs(
    query: Annotated[str, Field(description="words to look for, e.g. 'context budget'")],
    mode: Annotated[Literal["summary", "detailed", "full"], Field(description=(
        "summary (default): the matches in a few lines; detailed: the top sections' text; "
        "full: every matching page, whole (often very long)"))] = "summary",
    lang: Annotated[Literal["en", "ja", "both"], Field(description="which docs")] = "both",
) -> str:
    return answer(query, mode, lang)


def build_server():
    """The MCP server, with its one tool. The SDK is imported here, not above: answer() and
    answer_sizes() need none of it, and the bench and the tests import them."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("docs-search", log_level="WARNING",  # the SDK logs each call at INFO
                       instructions="Searches this project's docs (English, Japanese).")
    server.add_tool(search_docs, description=DESCRIPTION,
                    annotations=ToolAnnotations(read_only_hint=True),
                    structured_output=False)  # the text once, not a second copy of it as JSON
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", metavar="QUERY", help="print each mode's answer size, and exit")
    args = parser.parse_args()
    if args.sizes:
        for mode, size in answer_sizes(args.sizes).items():
            print(f"{mode}: {size:,} characters")
        return
    build_server().run("stdio")


if __name__ == "__main__":
    sys.exit(main())
