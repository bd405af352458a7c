"""Exercise 8 starts here: an MCP server that searches Markdown docs and answers too much.

    search(query) -> every section of every page that mentions the query, whole, best first

This is the gistdex case of the Context budget chapter before its fix: one query over this
project's docs can return tens of thousands of characters, and the client that called the tool
has to cut or refuse it. The exercise gives `search` a response mode (README.md).

Run it as an MCP server over stdio, as an agent's .mcp.json would start it:
    python workshop/08-response-modes/search_server.py
It searches the project's English docs; DOCS_DIR=path/to/folder searches another folder of
Markdown files (the tests give it a folder of their own).
"""

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mcp.server.mcpserver import MCPServer

# -- config -- which docs to search
DOCS_DIR = Path(os.environ.get("DOCS_DIR", Path(__file__).resolve().parents[2] / "docs_en"))
HEADING = re.compile(r"^#{1,6} (.+)")

server = MCPServer("docs")


# -- search -- sections of the pages, scored by how often they name the query's words
@dataclass
class Section:
    page: str  # its path under DOCS_DIR
    heading: str
    text: str
    score: int = 0


def read_sections(folder: Path) -> list[Section]:
    """Every section of every Markdown page under folder: a heading and the lines up to the next
    heading (a page's lines before its first heading are a section named after the page)."""
    sections = []
    for path in sorted(folder.rglob("*.md")):
        page = path.relative_to(folder).as_posix()
        heading, lines = page, []
        for line in path.read_text(encoding="utf-8").splitlines():
            if match := HEADING.match(line):
                sections.append(Section(page, heading, "\n".join(lines).strip()))
                heading, lines = match[1].strip(), []
            else:
                lines.append(line)
        sections.append(Section(page, heading, "\n".join(lines).strip()))
    return [section for section in sections if section.text]


def search_sections(query: str) -> list[Section]:
    """The sections that name a word of the query, best first: the most mentions first, and in
    page order among equals."""
    words = query.lower().split()
    hits = []
    for section in read_sections(DOCS_DIR):
        text = section.text.lower()
        section.score = sum(text.count(word) for word in words)
        if section.score:
            hits.append(section)
    return sorted(hits, key=lambda section: -section.score)


def shown(section: Section) -> str:
    return f"## {section.page}: {section.heading} (score {section.score})\n\n{section.text}\n"


# -- tool -- what the model calls
@server.tool()
def search(query: str) -> str:
    """Search the project's docs for a word or phrase. Returns every section that mentions it,
    whole, best first, each with its page, heading and score."""
    hits = search_sections(query)
    if not hits:
        return f"No section mentions {query!r}."
    found = f"{len(hits)} sections mention {query!r}, best first.\n\n"
    return found + "\n".join(shown(section) for section in hits)


if __name__ == "__main__":
    server.run()
