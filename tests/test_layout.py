"""The docs site laid out as a reader sees it, on a desktop (1280 px) and on a phone (390 px), both
languages, offline: diagrams and charts stay readable, nothing overlaps, nothing is cut off at the
edge, and no identifier or word breaks in the middle.

Uses the browser of tests/site.py, the offline tab of tests/test_browser.py and the one test
build. mermaid draws each diagram inside a closed shadow root; the tab opens those roots, so that
the checks can look in.
"""

import json
import os
import shutil
from collections.abc import Iterator

import pytest

from docsgen.serve import serving
from tests.test_browser import (
    CODE_THAT_SCROLLS,
    DIFF_LINES_NOT_FULL_WIDTH,
    OPEN_THE_FIRST_CALL,
    OPTIONAL_HOSTS,
    PAGE_PATHS,
    OfflineTab,
    skip_without_mermaid,
)

# In the order a page is checked: as opened on a phone, then widened. (Checked at the desktop's
# width first, a page was narrowed again and widened once more: two more layouts of each page.)
WIDTHS = {"phone": 390, "desktop": 1280}
SMALLEST_TEXT = 9  # px: below this, text in a figure is hard to read on a phone

# Material gives each diagram a closed shadow root; an open one is the same, and can be looked in.
OPEN_SHADOW_ROOTS = """
    const attachShadow = Element.prototype.attachShadow;
    Element.prototype.attachShadow = function (options) {
        return attachShadow.call(this, { ...options, mode: 'open' });
    };
"""

# Every diagram drawn: a <div> whose (opened) shadow root holds mermaid's <svg>.
DIAGRAMS_DRAWN = """() => [...document.querySelectorAll('.mermaid')].every((block) =>
    block.tagName === 'DIV' && block.shadowRoot && block.shadowRoot.querySelector('svg'))"""

# Helpers for the checks below: every figure's <svg> as the reader sees it, and where a text is.
FIGURES = """
    const figures = () => [
        ...[...document.querySelectorAll('.md-typeset div.mermaid')]
            .map((host) => host.shadowRoot && host.shadowRoot.querySelector('svg')),
        ...document.querySelectorAll('.md-typeset figure.hood-chart svg'),
    ].filter((svg) => svg && svg.getClientRects().length > 0);
    const name = (element) => element.textContent.trim().slice(0, 40);
    const box = (element) => element.getBoundingClientRect();
    const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left))
        * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
    // the elements that hold text themselves: <text>, <tspan>, and HTML labels' spans and divs
    const texts = (svg) => [...svg.querySelectorAll('*')].filter((element) =>
        [...element.childNodes].some((node) => node.nodeType === 3 && node.textContent.trim())
        && element.getClientRects().length > 0);
"""

# Each text in a figure drawn smaller than SMALLEST_TEXT: its font size scaled as the figure is.
SMALL_FIGURE_TEXT = (
    "(smallest) => {"
    + FIGURES
    + """
    const small = [];
    for (const svg of figures()) {
        for (const text of texts(svg)) {
            // an HTML label is drawn by the <foreignObject> it sits in, at that one's scale
            const drawn = text instanceof SVGGraphicsElement ? text : text.closest('foreignObject');
            const matrix = drawn.getScreenCTM();
            const scale = Math.hypot(matrix.a, matrix.b);
            const size = parseFloat(getComputedStyle(text).fontSize) * scale;
            if (size < smallest - 0.05) small.push(`${name(text)} (${size.toFixed(1)} px)`);
        }
    }
    return small;
}"""
)

# A subgraph's title drawn over one of its boxes, or wrapped onto more lines than it was written
# with (mermaid wraps a title at 200 px but leaves room for one line only).
DIAGRAM_OVERLAPS = (
    "() => {"
    + FIGURES
    + """
    const found = [];
    for (const svg of figures()) {
        for (const title of svg.querySelectorAll('.cluster-label')) {
            for (const node of svg.querySelectorAll('.node')) {
                if (overlap(box(title), box(node)) > 1) {
                    found.push(`${name(title)} / ${name(node)}`);
                }
            }
            const walker = document.createTreeWalker(title, NodeFilter.SHOW_TEXT);
            while (walker.nextNode()) {
                const range = document.createRange();
                range.selectNodeContents(walker.currentNode);
                const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                if (lines.size > 1) found.push(`${name(title)}: wraps`);
            }
        }
    }
    return found;
}"""
)

# A chart's text that a limit line runs through (the line's own label, above it, aside).
LINE_THROUGH_TEXT = (
    "() => {"
    + FIGURES
    + """
    const found = [];
    for (const svg of figures()) {
        for (const line of svg.querySelectorAll('line.limit')) {
            const drawn = box(line);  // a vertical line's box is 0 px wide: give it its stroke
            const stroke = new DOMRect(drawn.x - 1, drawn.y, drawn.width + 2, drawn.height);
            for (const text of svg.querySelectorAll('text:not(.limit-label)')) {
                if (overlap(stroke, box(text)) > 0) found.push(name(text));
            }
        }
    }
    return found;
}"""
)

# Code in a table (an identifier, a command) that the line breaks in the middle.
BROKEN_CODE_IN_TABLES = """() => [...document.querySelectorAll('.md-typeset table code')]
    .filter((code) => new Set([...code.getClientRects()].map((r) => Math.round(r.top))).size > 1)
    .map((code) => code.textContent)"""

# Something in the article that reaches past the screen's edges and cannot be scrolled to: a wide
# table or figure must scroll in a box of its own.
CUT_OFF = """() => {
    const found = [];
    const what = (element) => `${element.tagName.toLowerCase()}.${element.getAttribute('class')}`;
    const visit = (element) => {
        const style = getComputedStyle(element);
        if (style.display === 'none' || style.visibility === 'hidden') return;
        const rect = element.getBoundingClientRect();
        if (rect.width > 0 && (rect.right > innerWidth + 1 || rect.left < -1)) {
            found.push(`${what(element)}: ${rect.left.toFixed(0)}..${rect.right.toFixed(0)} px`);
            return;
        }
        const scrolls = ['auto', 'scroll'].includes(style.overflowX);
        const clips = ['hidden', 'clip'].includes(style.overflowX);
        if (clips && element.scrollWidth > element.clientWidth + 1) {
            found.push(`${what(element)}: clipped`);
        }
        if (scrolls) return;
        [...element.children, ...(element.shadowRoot ? element.shadowRoot.children : [])]
            .forEach(visit);
    };
    visit(document.querySelector('article'));
    if (document.documentElement.scrollWidth > innerWidth) found.push('the page scrolls sideways');
    return found;
}"""


# Words that a heading or a table cell must not break: Japanese has no spaces, so a browser may
# break a line between any two characters unless told to keep phrases together.
UNBROKEN_WORDS = {
    "ja": ["エージェントループ", "サブエージェント", "コンテキスト予算", "ワークショップ"],
    "en": [],
}

# Headings and table cells that break inside one of those words.
BROKEN_WORDS = """(words) => {
    const found = [];
    for (const heading of document.querySelectorAll('.md-typeset :is(h1, h2, h3, th, td)')) {
        const walker = document.createTreeWalker(heading, NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) {
            const node = walker.currentNode;
            for (const word of words) {
                let at = -1;
                while ((at = node.data.indexOf(word, at + 1)) >= 0) {
                    const range = document.createRange();
                    range.setStart(node, at);
                    range.setEnd(node, at + word.length);
                    const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                    if (tops.size > 1) found.push(`${heading.textContent.trim()}: ${word}`);
                }
            }
        }
    }
    return found;
}"""


@pytest.fixture(scope="module")
def site_without_search(built_site, tmp_path_factory) -> Iterator[str]:
    """The test build, served with a search index that holds no page: a tab that does not search
    then spends no time (half a second of CPU a page) building the index, and search still starts
    as it does on the site. The files are the build's own, linked, not copied."""
    copy = tmp_path_factory.mktemp("no-search") / "site"
    shutil.copytree(built_site, copy, copy_function=link_or_copy)
    for index in copy.glob("**/search/search_index.json"):
        settings = json.loads(index.read_text(encoding="utf-8"))["config"]
        index.unlink()  # a link to the build's file: write a new one, not into that
        index.write_text(json.dumps({"config": settings, "docs": []}), encoding="utf-8")
    with serving(copy) as base:
        yield base


def link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # a file system without hard links
        shutil.copy2(source, target)


@pytest.fixture(scope="module")
def shared_layout_tab(browser) -> Iterator[OfflineTab]:
    """One tab for all the pages a worker checks: its cache keeps mermaid and Material's scripts
    compiled from one page to the next (a new tab would fetch and compile them again)."""
    tab = OfflineTab(browser)
    tab.context.set_default_timeout(15_000)
    tab.context.add_init_script(OPEN_SHADOW_ROOTS)
    yield tab
    tab.context.close()


@pytest.fixture
def layout_tab(shared_layout_tab: OfflineTab) -> OfflineTab:
    """The shared tab, with what it saw on earlier pages forgotten."""
    shared_layout_tab.errors.clear()
    shared_layout_tab.blocked_hosts.clear()
    return shared_layout_tab


def layout_problems(tab: OfflineTab, language: str) -> dict[str, list[str]]:
    page = tab.page
    checks = {
        "figure text too small": page.evaluate(SMALL_FIGURE_TEXT, SMALLEST_TEXT),
        "diagram titles over boxes": page.evaluate(DIAGRAM_OVERLAPS),
        "limit line through text": page.evaluate(LINE_THROUGH_TEXT),
        "code broken in a table": page.evaluate(BROKEN_CODE_IN_TABLES),
        "cut off at the edge": page.evaluate(CUT_OFF),
        "word broken in a heading or table": page.evaluate(BROKEN_WORDS, UNBROKEN_WORDS[language]),
    }
    return {kind: found for kind, found in checks.items() if found}


@pytest.mark.parametrize("language", ["en", "ja"])
def test_every_page_loads_offline_and_reads_well_on_a_phone_and_a_desktop(
    layout_tab, site_without_search, built_site, language
):
    """Each page is opened once, offline, on a phone, then the window is widened to a desktop's:
    the layout follows the width (CSS, and the charts' container queries) without loading the
    page again. At the desktop's width the page also draws its diagrams, raises no error, fits its
    code, opens its first model call, and its language switch leads to the same page. (One test
    per language, in one tab: from the second page on, the tab has mermaid and Material's scripts
    in its cache, compiled; a tab per page cost half as much CPU again.)"""
    skip_without_mermaid(built_site)
    tab = layout_tab
    here, there = site_without_search, site_without_search + "ja/"
    if language == "ja":
        here, there = there, here
    other = "en" if language == "ja" else "ja"
    problems = []
    for path in PAGE_PATHS:
        tab.page.set_viewport_size({"width": WIDTHS["phone"], "height": 900})
        tab.open(here + path)
        if tab.page.locator(".mermaid").count() > 0:
            tab.page.wait_for_function(DIAGRAMS_DRAWN)
        for width in WIDTHS:
            tab.page.set_viewport_size({"width": WIDTHS[width], "height": 900})
            found = layout_problems(tab, language)
            where = f"{path or 'home'} ({width})"
            problems += [f"{where}: {kind}: {what}" for kind, what in found.items()]
        problems += page_problems(tab, f"{language}/{path}", there + path, other)
    assert not problems, "\n".join(problems)
    assert tab.errors == []
    assert tab.blocked_hosts <= OPTIONAL_HOSTS, tab.blocked_hosts


def page_problems(tab: OfflineTab, where: str, same_page_there: str, other: str) -> list[str]:
    """What a desktop reader would hit on the page open in the tab (the first model call is
    opened last: it changes the page)."""
    problems = []
    text = tab.page.inner_text("article")
    if "sequenceDiagram" in text or "flowchart" in text:
        problems.append(f"{where}: a diagram shown as raw text")
    if tab.errors:
        problems.append(f"{where}: errors {tab.errors}")
    if tab.page.evaluate(DIFF_LINES_NOT_FULL_WIDTH):
        problems.append(f"{where}: diff lines coloured only as far as their text")
    too_wide = tab.page.evaluate(CODE_THAT_SCROLLS)
    if too_wide:
        problems.append(f"{where}: code that scrolls sideways: {too_wide}")
    switch = tab.page.locator(f"a.md-select__link[hreflang={other}]")
    if switch.evaluate("(link) => link.href") != same_page_there:
        problems.append(f"{where}: the language switch does not lead to the same page")
    is_chapter = where.split("/", 1)[1].startswith("v")
    if is_chapter and tab.page.evaluate(OPEN_THE_FIRST_CALL) <= 0:
        problems.append(f"{where}: its first model call does not open and show its JSON")
    return problems
