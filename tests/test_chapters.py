"""Each version chapter tells its core in about ten minutes, in the same shape (issue 32).

The checks read the built site (tests/site.py) as a reader sees it: what stands open on the page,
outside folded blocks (`??? note`), code, tables, figures and diagrams, is the prose a reader reads
before choosing to open anything. For every version chapter in the nav, in both languages:

- that prose is at most PROSE_LIMIT (English words, Japanese characters);
- the demo, the section that holds the demo's transcript, starts in the first third of it;
- the chapter has its key-concepts table (a concept, and where it is in the code) and its
  comparison table (the version before, or for v1 a plain model call, against this one);
- it has a dated "In Claude Code today" box that links its source;
- its parts come in the same order in every chapter: the demo, the diff walkthrough (from v2
  on, folded), the key-concepts table, the comparison table, the pattern, then the box;
- from v2 on, its walkthrough of the diff has one item per hunk of the diff as the files are now.

And the API's own answers the v5 chapter shows (examples/context_management.py) are request
fields the real SDK sends as written. Run with `-rP` to see each chapter's figures.
"""

import re
from html import unescape

import anthropic
import pytest
import yaml

from docsgen.generated import version_diff
from scripted import ROOT, SCRIPTS
from tests.test_docs import NavLoader, html_of

LANGUAGES = ["en", "ja"]
PROSE_LIMIT = {"en": 2000, "ja": 6000}  # about ten minutes' reading (issue 32)
UNIT = {"en": "English words", "ja": "Japanese characters"}
DEMO_SHARE = 1 / 3  # of the prose, read before the demo's section begins

# The headers the two tables have, in each language (the glossary's words).
KEY_CONCEPTS = {
    "en": ["Concept", "Where it is in the code"],
    "ja": ["概念", "コードのどこにあるか"],
}
NO_AGENT = {"en": "A plain model call", "ja": "モデルを呼ぶだけ"}  # what v1 is compared with
ASPECT = {"en": "", "ja": ""}  # the comparison table's first header cell is left blank
CLAUDE_CODE_BOX = {"en": "In Claude Code today", "ja": "いまの Claude Code では"}
PATTERN = {"en": "The pattern", "ja": "パターン"}  # the heading of the pattern in one line

# What a reader does not read unless they choose to: folded blocks, code, tables, figures
# (the charts and the request inspector's sections), diagrams (mermaid's <pre>), and a heading's ¶.
HIDDEN = re.compile(
    r"<(details|pre|code|table|figure|svg|section)\b[^>]*>(?:(?!<\1\b).)*?</\1>", re.S
)


def chapters_in_the_nav() -> list[str]:
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=NavLoader)["nav"]
    pages = [page for entry in nav for page in entry.values()]
    return [page for page in pages if re.fullmatch(r"v\d\.md", page)]


CHAPTERS = chapters_in_the_nav()


def article(site, language: str, page: str) -> str:
    html = html_of(site, language, page)
    return html[html.index("<article") : html.index("</article>")]


def visible_prose(html: str) -> str:
    """The text of a piece of a built page that stands open: innermost hidden parts go first, so a
    folded block with code inside is removed whole."""
    html = re.sub(r'<a class="headerlink".*?</a>', " ", html)
    while True:
        shorter = HIDDEN.sub(" ", html)
        if shorter == html:
            break
        html = shorter
    return unescape(re.sub(r"<[^>]+>", " ", html))


def size(text: str, language: str) -> int:
    """English words, or Japanese characters (everything but white space)."""
    return len(text.split()) if language == "en" else len(re.sub(r"\s", "", text))


def demo_start(html: str, version: str) -> int:
    """Where the section that holds the demo's transcript begins: the last <h2> before the code
    block that starts with the demo's command."""
    transcript = html.index(f"$ python -m scripted.demo {version}")
    return html.rindex("<h2", 0, transcript)


def tables(html: str) -> list[tuple[list[str], list[list[str]]]]:
    """Each table of a built page: its header cells and its rows, as text."""
    found = []
    for table in re.findall(r"<table>(.*?)</table>", html, re.S):
        header = [cell_text(cell) for cell in re.findall(r"<th[^>]*>(.*?)</th>", table, re.S)]
        rows = [
            re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
        ]
        found.append((header, [row for row in rows if row]))
    return found


def in_the_code(name: str, code: str) -> bool:
    """Whether a name a key concept points to is there: a file of the project (bench/caching.py),
    or whole names in the code, every one of an expression (TOOLS.append(TASK_TOOL))."""
    if "/" in name:
        return (ROOT / name).exists()
    return all(re.search(rf"\b{word}\b", code) for word in re.findall(r"[A-Za-z_]\w*", name))


def compared_header(language: str, version: str) -> list[str]:
    """The comparison table's header: a blank cell, the version before (v1: a plain model call),
    this version."""
    before = NO_AGENT[language] if version == "v1" else f"v{int(version[1]) - 1}"
    return [ASPECT[language], before, version]


def table_start(html: str, header: list[str]) -> int:
    """Where the table with these header cells is."""
    cells = "".join(rf"<th[^>]*>{re.escape(cell)}</th>\s*" for cell in header)
    return re.search(cells, html).start()


def cell_text(cell: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", cell)).strip()


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", CHAPTERS)
def test_a_chapter_reads_in_ten_minutes_and_its_demo_starts_in_the_first_third(
    built_site, page, language
):
    html = article(built_site, language, page)
    whole = size(visible_prose(html), language)
    before_demo = size(visible_prose(html[: demo_start(html, page[:2])]), language)
    share = before_demo / whole
    print(f"{language}/{page}: {whole:,} {UNIT[language]}; the demo starts at {share:.0%}")
    assert whole <= PROSE_LIMIT[language], f"{whole:,} {UNIT[language]} of open prose"
    assert share <= DEMO_SHARE, f"the demo starts after {share:.0%} of the prose"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", CHAPTERS)
def test_a_chapter_has_its_key_concepts_and_comparison_tables(built_site, page, language):
    """The key concepts point into the code: each row's backquoted names are files of the project,
    or names in the version's script or the plumbing. The comparison sets the version before (v1:
    a plain model call) beside this one, in the same rows in both languages."""
    version = page[:2]
    found = tables(article(built_site, language, page))
    [concepts] = [rows for header, rows in found if header == KEY_CONCEPTS[language]]
    code = (ROOT / SCRIPTS[version]).read_text(encoding="utf-8")
    code += "".join(path.read_text(encoding="utf-8") for path in ROOT.glob("plumbing/*.py"))
    assert len(concepts) >= 3
    for concept, where in concepts:
        names = [cell_text(name) for name in re.findall(r"<code>(.*?)</code>", where, re.S)]
        assert names, f"{cell_text(concept)!r}: no name in the code"
        missing = [name for name in names if not in_the_code(name, code)]
        assert missing == [], f"{cell_text(concept)!r} names what the code does not have"
    [compared] = [rows for header, rows in found if header == compared_header(language, version)]
    assert len(compared) >= 3
    if language == "ja":
        english = tables(article(built_site, "en", page))
        [rows] = [rows for header, rows in english if header == compared_header("en", version)]
        assert len(rows) == len(compared), "the two languages compare different things"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", CHAPTERS)
def test_a_chapter_says_how_claude_code_does_it_today_with_a_date_and_a_source(
    built_site, page, language
):
    html = article(built_site, language, page)
    boxes = re.findall(
        r'<div class="admonition[^"]*">\s*<p class="admonition-title">(.*?)</p>'
        r"(.*?)</div>",
        html,
        re.S,
    )
    [(title, body)] = [box for box in boxes if CLAUDE_CODE_BOX[language] in box[0]]
    assert re.search(r"\b20\d\d-\d\d\b|20\d\d 年 \d\d? 月", title), f"no date in {title!r}"
    assert re.search(r'<a href="https://', body), "no source linked"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", CHAPTERS)
def test_a_chapters_parts_come_in_the_same_order(built_site, page, language):
    """The order issue 32 gives, with the diff walkthrough in one place in every chapter: at the
    end of the code, before the key concepts (v1 has no diff)."""
    version = page[:2]
    html = article(built_site, language, page)
    parts = {"the demo": demo_start(html, version)}
    if version != "v1":
        before = f"v{int(version[1]) - 1}"
        walkthrough = re.escape(f"{SCRIPTS[before]} → {SCRIPTS[version]}")
        parts["the diff walkthrough"] = re.search(rf"<summary>[^<]*{walkthrough}", html).start()
    parts["the key concepts"] = table_start(html, KEY_CONCEPTS[language])
    parts["the comparison"] = table_start(html, compared_header(language, version))
    parts["the pattern"] = re.search(rf"<h2[^>]*>{PATTERN[language]}", html).start()
    # the box's title: v6's requests quote pages whose own box has the same words
    parts["the Claude Code box"] = html.index(f'admonition-title">{CLAUDE_CODE_BOX[language]}')
    assert sorted(parts, key=parts.get) == list(parts)


@pytest.mark.parametrize("name", ["SERVER_COMPACTION", "CLEAR_TOOL_USES"])
def test_the_request_shapes_the_v5_chapter_shows_are_sent_by_the_sdk_as_written(scripted_api, name):
    """Server-side compaction and context editing, as the chapter includes them from
    examples/context_management.py: the real SDK takes each as arguments of
    client.beta.messages.create() and sends the fields and the beta header unchanged."""
    from examples import context_management

    fields = getattr(context_management, name)
    scripted_api.play({"turns": [{"text": "ok"}]})
    anthropic.Anthropic().beta.messages.create(
        model="claude-sonnet-5-5",
        max_tokens=100,
        messages=[{"role": "user", "content": "hi"}],
        **fields,
    )
    [request] = scripted_api.requests
    assert request.body["context_management"] == fields["context_management"]
    assert request.headers["anthropic-beta"] == ",".join(fields["betas"])


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", CHAPTERS[1:])
def test_a_chapters_diff_walkthrough_has_one_item_per_hunk_of_the_diff(page, language):
    """The first numbered list after the chapter includes its diff walks through that diff: one
    item per hunk of `diff v(n-1) v(n)` as the files are now (a hunk added to a script and not to
    the walkthrough shows here)."""
    version = page[:2]
    before = f"v{int(version[1]) - 1}"
    lines = (ROOT / f"docs_{language}" / page).read_text(encoding="utf-8").splitlines()
    include = f'--8<-- "diffs/{before}-to-{version}.diff"'
    start = next(number for number, line in enumerate(lines) if line.strip() == include)
    first = next(
        number for number in range(start, len(lines)) if re.match(r"\s*1\. ", lines[number])
    )
    indent = len(lines[first]) - len(lines[first].lstrip())
    items = 0
    for line in lines[first:]:
        if re.match(rf"{' ' * indent}\d+\. ", line):
            items += 1
        elif line.strip() and not line.startswith(" " * (indent + 3)):
            break
    diff = version_diff(ROOT / SCRIPTS[before], ROOT / SCRIPTS[version])
    assert items == len(re.findall(r"^@@ ", diff, re.M)), "one item per hunk"

