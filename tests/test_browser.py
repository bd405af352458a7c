"""The docs site in a real browser, offline: headless Chromium (Debian's package) driven by
Playwright, every request that leaves 127.0.0.1 blocked, as a reader on a train sees the site.

The browser (tests/site.py's `browser`, one per test process) is cut off by a proxy that is not
there: every address but the loopback goes to a port nothing listens on, and fails. Playwright's
request routing would do it too, but it turns the browser's cache off, and each page then
fetched and compiled mermaid and Material's scripts again: a third of the browser's time here.

The site is the one test build (tests/site.py), served under the path it is published at. The tests
skip, saying why, where Playwright or Chromium is missing; .ci/run installs both.
"""

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from scripted import ROOT
from tests.site import PAGES_EN, SEARCH_CASES

pytest.importorskip(
    "playwright.sync_api",
    reason="Playwright is not installed (pip install -r requirements-dev.txt)",
)

# Requests a page may try and go without: GitHub's API for the repository's stars in the header.
# (Material reads each language's sitemap to match pages across languages: from this copy, as the
# alternate links name the language roots relative to the page, never the published site.)
OPTIONAL_HOSTS = {"api.github.com"}
PAGE_PATHS = ["" if page == "index.md" else page.removesuffix(".md") + "/" for page in PAGES_EN]


class OfflineTab:
    """One browser tab with the network cut off: what it tried to reach, and its errors."""

    def __init__(self, browser) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.blocked_hosts: set[str] = set()
        self.errors: list[str] = []
        self.context.on("requestfailed", self._note_if_blocked)
        # a wait that is met returns at once; the limit only bounds a failure, and at load 9 (a
        # rehearsal beside a mutation run) the Japanese search's waits outlasted the default 30 s
        self.context.set_default_timeout(90_000)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _note_if_blocked(self, request) -> None:
        host = urlsplit(request.url).hostname
        if host != "127.0.0.1":
            self.blocked_hosts.add(host)

    def open(self, url: str) -> None:
        self.page.goto(url, wait_until="load")


@pytest.fixture
def tab(browser) -> Iterator[OfflineTab]:
    opened = OfflineTab(browser)
    yield opened
    opened.context.close()


@pytest.fixture(scope="module")
def search_tab(browser, served_site, built_site) -> Iterator:
    """A tab at the home page of a language, shared by this module's search tests: the page
    builds its search index once (a second and a half of CPU), however many tests search it."""
    skip_without_mermaid(built_site)  # a page that waits for a blocked CDN never starts search
    tabs: dict[str, OfflineTab] = {}

    def at_home(language: str) -> OfflineTab:
        if language not in tabs:
            tabs[language] = OfflineTab(browser)
            tabs[language].open(served_site + ("ja/" if language == "ja" else ""))
        return tabs[language]

    yield at_home
    for opened in tabs.values():
        opened.context.close()


DIAGRAMS_DRAWN = """() => {
    const blocks = [...document.querySelectorAll('.mermaid')];
    return blocks.length > 0 && blocks.every(
        (block) => block.tagName === 'DIV' && block.getBoundingClientRect().height > 50);
}"""


# The first line of each code block made of lines a script may have (100 characters, and one more
# for a diff's +/-) that does not fit the column at the tab's width (1280 px) and would scroll.
CODE_THAT_SCROLLS = """() => [...document.querySelectorAll('.md-typeset pre > code')]
    .filter((code) => Math.max(...code.innerText.split('\\n').map((line) => line.length)) <= 101)
    .filter((code) => code.scrollWidth > code.clientWidth + 1)
    .map((code) => code.innerText.split('\\n')[0])"""


def skip_without_mermaid(site: Path) -> None:
    if not (site / "assets" / "javascripts" / "mermaid.min.js").exists():
        pytest.skip("mermaid was not fetched: run `python -m docsgen.vendor` (.ci/run does)")


# Open the first model call of the page's "Under the hood" section, and its request's messages:
# how many elements are shown inside it afterwards (0: nothing opened).
OPEN_THE_FIRST_CALL = """() => {
    const call = document.querySelector('.hood details.hood-call');
    if (!call) return -1;
    call.querySelector(':scope > summary').click();
    const parts = [...call.querySelectorAll('details.hood-part')];
    parts.forEach((part) => part.querySelector(':scope > summary').click());
    return [...call.querySelectorAll('pre')].filter((pre) => pre.offsetHeight > 0).length;
}"""


# Added and removed lines of a diff whose colour stops where their text stops.
DIFF_LINES_NOT_FULL_WIDTH = """() => [...document.querySelectorAll('.highlight :is(.gi, .gd)')]
    .filter((line) => line.getBoundingClientRect().width
        < line.closest('code').clientWidth * 0.95).length"""


# Every page, opened offline, is checked once per language in tests/test_layout.py: there each
# page is loaded once and checked at a phone's width, then at a desktop's, for layout and for
# what this file checked before (diagrams drawn, no error, code fits, the language switch).


def search(tab: OfflineTab, query: str) -> list[str]:
    """Type a query as a reader does and return the page paths of the results, in order."""
    box = tab.page.locator("input.md-search__input")
    box.focus()
    box.fill("")
    tab.page.keyboard.press("End")  # an empty box: the prompt to type comes back
    tab.page.wait_for_function(f"() => {NO_RESULTS_SHOWN}")
    tab.page.keyboard.insert_text(query)  # as an input method hands over a finished word
    tab.page.keyboard.press("End")
    tab.page.wait_for_function(f"() => !({NO_RESULTS_SHOWN})")  # the count of results, or none
    tab.page.wait_for_function(EVERY_RESULT_SHOWN)  # scrolled down, as a reader does, to the last
    links = tab.page.eval_on_selector_all(
        ".md-search-result__item > a", "(links) => links.map((link) => link.href)"
    )
    return [urlsplit(link).path for link in links]


# Material lists the first ten pages found, then four more each time the list is scrolled to its
# end. It notices the end only as a change, from "not at the end" to "at the end": a jump from the
# old end straight to the new one (scrollTo, as this test did) is no change, and the next four
# never come (with fifteen pages, a word they all have listed fourteen; seen in Material 9.8.2's
# source, components/search/result: bufferCount(4) zipped with a distinctUntilChanged boundary).
# A reader scrolls with the wheel or Page Down, through the list, and so does this: most of a
# screen at a time, and from the very end back to the top to look again.
EVERY_RESULT_SHOWN = """() => {
    const listed = document.querySelectorAll('.md-search-result__item').length;
    const counted = document.querySelector('.md-search-result__meta').textContent.match(/\\d+/);
    if (listed >= Number(counted ? counted[0] : 0)) return true;
    const results = document.querySelector('.md-search__scrollwrap');
    if (results.scrollTop + results.clientHeight >= results.scrollHeight - 1) {
        results.scrollTo(0, 0);
    } else {
        results.scrollBy(0, results.clientHeight * 0.9);
    }
    return false;
}"""

# Before a query (and while the index is built) the result list is empty and its heading is the
# prompt to type; after one, the heading counts the results, or says there are none.
NO_RESULTS_SHOWN = (
    "document.querySelectorAll('.md-search-result__item').length === 0"
    " && !/\\d|No matching|見つかりませんでした/.test("
    "document.querySelector('.md-search-result__meta').textContent)"
)


@pytest.mark.parametrize("language", ["en", "ja"])
def test_search_finds_the_page_of_each_glossary_term(search_tab, served_site, language):
    tab = search_tab(language)
    base = served_site + ("ja/" if language == "ja" else "")
    missed = []
    for term, page in SEARCH_CASES[language]:
        found = search(tab, term)
        expected = urlsplit(base + page).path
        if expected not in found:
            missed.append(f"{term!r} did not find {page or 'the home page'}: {found[:5]}")
    assert not missed, "\n".join(missed)
    assert tab.errors == []


def test_the_language_switch_lands_on_the_same_page_even_from_the_404_page(tab, served_site):
    """Every page's switch was checked above; here it is followed, from the page that knows its
    address only in the browser: the Japanese 404 page, at an address that does not exist."""
    tab.open(served_site + "ja/no-such-page/?q=1")
    outside = "(url) => fetch(url).then(() => 'reached', () => 'blocked')"
    assert tab.page.evaluate(outside, "http://192.0.2.1/") == "blocked"  # offline indeed
    assert tab.page.evaluate(outside, "https://example.com/") == "blocked"
    assert {"192.0.2.1", "example.com"} <= tab.blocked_hosts
    assert tab.page.locator("html").get_attribute("lang") == "ja"
    tab.page.locator("a.md-select__link[hreflang=en]").dispatch_event("click")
    tab.page.wait_for_url(served_site + "no-such-page/?q=1")
    assert tab.page.locator("html").get_attribute("lang") == "en"  # the English 404 page
    assert tab.errors == []


# -- search finds the section about the thing -------------------------------------------------

# A query, and the section that must be the first section in the results: the one about it.
# For read-only that is v3's section, which leads on to read-only.md, the page with the whole
# story (ranked lower by its front matter, `search: boost`, or its many mentions put it first).
FIRST_SECTION = {
    "en": [
        ("Ctrl-C", "v1/#at-the-terminal"),
        ("read-only", "v3/#read-only-enforcement"),
        ("enforcement", "v3/#read-only-enforcement"),
    ],
    "ja": [
        ("Ctrl-C", "v1/#ターミナルでの操作"),
        ("読み取り専用", "v3/#読み取り専用の強制"),
    ],
}
# A word, and a compound that holds it: the word must find every page that says the compound.
WORD_IN_COMPOUND = {
    "en": [("caching", "prompt caching")],
    "ja": [
        ("キャッシュ", "プロンプトキャッシュ"),
        ("ウィンドウ", "コンテキストウィンドウ"),
        ("ハンドラー", "ツールハンドラー"),
        ("ループ", "エージェントループ"),
    ],
}


def first_section(tab: OfflineTab, query: str) -> str:
    """The page and anchor of the first section in the results, e.g. v1/#at-the-terminal."""
    search(tab, query)
    hrefs = tab.page.eval_on_selector_all(
        ".md-search-result__item a", "(links) => links.map((link) => link.href)"
    )
    sections = [urlsplit(href) for href in hrefs if urlsplit(href).fragment]
    return f"{sections[0].path}#{unquote(sections[0].fragment)}" if sections else ""


@pytest.mark.parametrize("language", ["en", "ja"])
def test_search_puts_the_section_about_a_thing_first_and_finds_words_inside_compounds(
    search_tab, served_site, language
):
    tab = search_tab(language)
    base = served_site + ("ja/" if language == "ja" else "")
    wrong = []
    for query, section in FIRST_SECTION[language]:
        page, anchor = section.split("#")
        expected = f"{urlsplit(base + page).path}#{anchor}"
        if (found := first_section(tab, query)) != expected:
            wrong.append(f"{query!r}: first section {found}, not {expected}")
    folder = ROOT / f"docs_{language}"
    for word, compound in WORD_IN_COMPOUND[language]:
        pages = [
            urlsplit(base + ("" if path.stem == "index" else f"{path.stem}/")).path
            for path in sorted(folder.glob("*.md"))
            if compound in path.read_text(encoding="utf-8")
        ]
        assert pages, f"no page says {compound!r}"
        missed = sorted(set(pages) - set(search(tab, word)))
        if missed:
            wrong.append(f"{word!r} misses pages that say {compound!r}: {missed}")
    assert not wrong, "\n".join(wrong)
    assert tab.errors == []
