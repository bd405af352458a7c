"""The docs site: both languages say the same things, code comes from the files, and the build is
clean.

The page checks read the Markdown and need nothing installed. The build checks run the one build
command, `python -m docsgen`, once for the module, and look at what it produced."""

import ast
import builtins
import difflib
import json
import os
import re
import subprocess
import sys
import time
from html import unescape
from pathlib import Path
from urllib.parse import urljoin

import pytest
import yaml

from docsgen.generated import (
    SECTION_HEADING,
    script_sections,
    steady,
    task_call_order,
    version_diff,
)
from docsgen.numbers import PLACEHOLDER, changed_lines
from scripted import ROOT
from scripted import SCRIPTS as VERSION_SCRIPTS
from tests.site import SEARCH_CASES, reads_the_site, start_in_background, stop_group
from tests.test_diff_budget import removed_or_changed
from tests.test_tools import runs_after_a_moment

DOCS = {"en": ROOT / "docs_en", "ja": ROOT / "docs_ja"}
GENERATED = ROOT / ".generated"
SCRIPTS = list(VERSION_SCRIPTS.values())
PAGES = sorted(path.relative_to(DOCS["en"]).as_posix() for path in DOCS["en"].rglob("*.md"))

SNIPPET = re.compile(r'^\s*-+8<-+\s+"([^"]+)"\s*$')  # --8<-- "sections/v1_basic/loop.py"
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
# What a fenced block may hold, by language. Everything else is refused, so a new language is a
# decision.
SNIPPETS_ONLY = {
    "python",
    "py",
    "pycon",
    "diff",
    "text",
    "yaml",
    "ini",
}  # code, diffs, transcripts and config files come from files
SHELL = {"bash", "console", "powershell"}  # a few commands to type
SHELL_MAX_LINES = 6
FREE = {"mermaid"}  # diagrams are the page's own content


def read_page(language: str, page: str) -> list[str]:
    return (DOCS[language] / page).read_text(encoding="utf-8").splitlines()


def split_fences(lines: list[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The prose lines, and (language, body) of every fenced block, indented ones (in tabs,
    admonitions) included."""
    prose, blocks, fence = [], [], None
    for line in lines:
        match = FENCE.match(line)
        if fence is None and match:
            fence, language, body = match.group(2), match.group(3).lower(), []
        elif fence is not None and line.strip() == fence:
            blocks.append((language, body))
            fence = None
        elif fence is not None:
            body.append(line)
        else:
            prose.append(line)
    return prose, blocks


def heading_counts(lines: list[str]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for line in split_fences(lines)[
        0
    ]:  # outside code, where "#" starts a heading and not a comment
        if match := re.match(r"^(#{1,6})\s", line):
            counts[len(match.group(1))] = counts.get(len(match.group(1)), 0) + 1
    return counts


def snippets(lines: list[str], language: str = "en") -> list[str]:
    """The included files; one made per language (hood/ja/v1.html) is named as hood/*/v1.html."""
    found = [match.group(1) for line in lines if (match := SNIPPET.match(line))]
    return sorted(name.replace(f"/{language}/", "/*/") for name in found)


# -- the two languages match
# ---------------------------------------------------------------------------------


def test_every_page_exists_in_both_languages():
    pages = {
        language: {p.relative_to(folder).as_posix() for p in folder.rglob("*.md")}
        for language, folder in DOCS.items()
    }
    assert pages["en"] - pages["ja"] == set(), "English pages without a Japanese counterpart"
    assert pages["ja"] - pages["en"] == set(), "Japanese pages without an English counterpart"


@pytest.mark.parametrize("page", PAGES)
def test_both_languages_have_the_same_headings_per_level(page):
    assert heading_counts(read_page("en", page)) == heading_counts(read_page("ja", page))


@pytest.mark.parametrize("page", PAGES)
def test_both_languages_include_the_same_files_and_sections(page):
    assert snippets(read_page("en", page), "en") == snippets(read_page("ja", page), "ja")


# -- no pasted code
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", [f"{language}/{page}" for language in DOCS for page in PAGES])
def test_code_blocks_are_included_from_files_not_pasted(page):
    language, name = page.split("/", 1)
    for fence_language, body in split_fences(read_page(language, name))[1]:
        code = [line for line in body if line.strip()]
        if fence_language in SNIPPETS_ONLY:
            pasted = [line for line in code if not SNIPPET.match(line)]
            assert not pasted, (
                f'a ```{fence_language} block must only include files (--8<-- "FILE"): {pasted}'
            )
        elif fence_language in SHELL:
            assert len(code) <= SHELL_MAX_LINES, (
                f"a ```{fence_language} block is for a few commands: {code}"
            )
        else:
            assert fence_language in FREE, (
                f"```{fence_language or '(no language)'} blocks are not expected: {code}"
            )


# -- what a chapter shows unfolded
# ------------------------------------------------------------------------------------------


def folded(lines: list[str]) -> list[bool]:
    """For each line, whether it sits inside a folded note (`??? note`), which a reader opens."""
    flags, inside = [], False
    for line in lines:
        if line.startswith("??? "):
            inside = True
        elif line.strip() and not line.startswith((" ", "\t")):
            inside = False
        flags.append(inside)
    return flags


def section_of(lines: list[str], heading: str) -> list[str]:
    """The lines of a section: its heading, down to the next heading of its level or above."""
    start = lines.index(heading)
    level = len(heading) - len(heading.lstrip("#"))
    prose_lines = set(split_fences(lines)[0])  # "#" in code is a comment, not a heading
    for end in range(start + 1, len(lines)):
        match = re.match(r"^(#{1,6})\s", lines[end])
        if match and lines[end] in prose_lines and len(match[1]) <= level:
            return lines[start:end]
    return lines[start:]


CHAPTERS = [page for page in PAGES if re.fullmatch(r"v\d\.md|read-only\.md", page)]
PLUMBING_MODULE = re.compile(r'--8<-- "plumbing/\w+\.py"')


@pytest.mark.parametrize("page", [f"{language}/{page}" for language in DOCS for page in CHAPTERS])
def test_a_chapter_shows_the_plumbing_folded(page):
    """What a first reading can skip is one click away, never in the way: every module of the
    plumbing a chapter includes sits in a `??? note` (v3's sandbox once stood open, 84 lines)."""
    language, name = page.split("/", 1)
    lines = read_page(language, name)
    open_modules = [
        line.strip()
        for line, inside in zip(lines, folded(lines), strict=True)
        if PLUMBING_MODULE.search(line) and not inside
    ]
    assert open_modules == []


READ_ONLY_SECTION = {"en": "## Read-only enforcement", "ja": "## 読み取り専用の強制"}
READ_ONLY_WORDS = 450  # English words a reader reads in v3's section without opening a note
READ_ONLY_CHARACTERS = 1600  # the same in Japanese, in characters (spaces left out)


@pytest.mark.parametrize("language", DOCS)
def test_the_v3_read_only_section_is_short_folds_its_table_and_leads_on_to_the_rest(language):
    """v3 is about subagents: its read-only section says what a learner needs, folds the bypass
    table and the code, and links to read-only.md, which holds the rest (and is in the nav)."""
    section = section_of(read_page(language, "v3.md"), READ_ONLY_SECTION[language])
    prose, _ = split_fences(section)
    shown = [line for line, inside in zip(prose, folded(prose), strict=True) if not inside]
    text = "\n".join(shown)
    if language == "en":
        assert len(text.split()) <= READ_ONLY_WORDS, len(text.split())
    else:
        assert len(re.sub(r"\s", "", text)) <= READ_ONLY_CHARACTERS, len(re.sub(r"\s", "", text))
    assert not [line for line in shown if line.startswith("|")], "a table left open"
    assert any(line.strip().startswith("| `cat a.txt > b.txt` |") for line in section)
    assert "](read-only.md)" in text
    config = "mkdocs.yml" if language == "en" else "mkdocs.ja.yml"
    nav = yaml.load((ROOT / config).read_text(encoding="utf-8"), Loader=NavLoader)["nav"]
    assert "read-only.md" in [page for entry in nav for page in entry.values()]


class NavLoader(yaml.SafeLoader):
    """Reads mkdocs.yml's nav; the !!python and !relative tags elsewhere in it are skipped."""


NavLoader.add_multi_constructor("", lambda loader, suffix, node: None)


WALKTHROUGH = {"en": "Its hunks, in order:", "ja": "ハンクは順に次のとおりです。"}


@pytest.mark.parametrize("language", DOCS)
def test_the_v3_diff_walkthrough_is_the_diff_of_the_current_files(language):
    """One item per hunk of `diff v2_planning.py v3_subagents.py`; every new plumbing module
    named; and no module v2 already imports named as new (it once said three new parts, not four,
    and listed shutil and threading as new imports). The walkthrough is detail, so it may sit in a
    folded note: it is read at the note's indentation."""
    lines = read_page(language, "v3.md")
    at = [line.strip() for line in lines].index(WALKTHROUGH[language])
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines = [line.removeprefix(indent) for line in lines]
    start = at + 1
    end = next(
        number
        for number in range(start + 1, len(lines))
        if lines[number].strip() and not re.match(r"\d+\. |   ", lines[number])
    )
    walkthrough = "\n".join(lines[start:end])
    items = re.findall(r"^\d+\. ", walkthrough, re.M)
    old, new = ROOT / VERSION_SCRIPTS["v2"], ROOT / VERSION_SCRIPTS["v3"]
    diff = version_diff(old, new)
    assert len(items) == len(re.findall(r"^@@ ", diff, re.M))
    for module in re.findall(r"^\+from plumbing\.(\w+) import", diff, re.M):
        assert f"`plumbing/{module}.py`" in walkthrough, module
    for name in re.findall(r"^\+(?:from (?!plumbing)\S+ )?import (\w+)", diff, re.M):
        assert f"`{name}`" in walkthrough, name
    v2_imports = re.findall(r"^(?:from \S+ )?import (\w+)", old.read_text("utf-8"), re.M)
    already = [name for name in v2_imports if f"`{name}`" in walkthrough]
    assert already == [], f"named as new, but v2 imports them already: {already}"


# -- names on the pages
# -----------------------------------------------------------------------------------------------

CODE_SPAN = re.compile(r"`([^`\n]+)`")
LOOKS_CALLED = re.compile(r"[A-Za-z_][\w.]*\(.*\)")  # `clip()`, `BOARD.locked(screen)`
CALLED = re.compile(r"([A-Za-z_]\w*)\(")
NAMED_IN_CODE = re.compile(r"(\w+)\(|\b(?:def|class) (\w+)")
NOT_OURS = {"system"}  # awk's system(), one of the ways v3's read-only shell refuses to write


def names_in_the_code() -> set[str]:
    """Every name the code defines or calls: the scripts, the plumbing, the scripted model, the
    benchmarks, and the workshop's reference solutions (the trainer notes name their functions)."""
    files = [*ROOT.glob("v*.py"), *ROOT.glob("plumbing/*.py"), *ROOT.glob("scripted/**/*.py")]
    files += ROOT.glob("bench/**/*.py")
    source = "\n".join(path.read_text(encoding="utf-8") for path in files)
    for solution in ROOT.glob("workshop/*/solution.diff"):  # what a solution adds, not removes
        lines = solution.read_text(encoding="utf-8").splitlines()
        source += "\n".join(line for line in lines if line.startswith("+"))
    return {called or defined for called, defined in NAMED_IN_CODE.findall(source)}


def test_every_function_a_page_names_exists_in_the_code():
    """A page that writes `read_user_input()` after the code renamed it reads as true and is not:
    every backquoted call on a page, and every call inside it, names something the code has."""
    known = names_in_the_code() | set(dir(builtins)) | NOT_OURS
    pages = [*DOCS["en"].rglob("*.md"), *DOCS["ja"].rglob("*.md")]
    pages += [ROOT / "README.md", ROOT / "README_ja.md"]
    unknown = []
    for page in pages:
        for span in CODE_SPAN.findall(page.read_text(encoding="utf-8")):
            if not LOOKS_CALLED.fullmatch(span):
                continue
            for name in CALLED.findall(span):
                if name not in known:
                    unknown.append(f"{page.relative_to(ROOT)}: `{span}` ({name})")
    assert unknown == [], "names the code does not have:\n" + "\n".join(unknown)


TEST_NAMED = re.compile(r"\b(tests/test_\w+\.py)(?:::(\w+))?")  # a file, or a file::test


def test_every_test_a_page_names_exists():
    """A page that says "tested by" names tests/test_x.py, or tests/test_x.py::test_y as pytest
    takes it: each file is there, and each test is defined in it."""
    pages = [*DOCS["en"].rglob("*.md"), *DOCS["ja"].rglob("*.md")]
    pages += [ROOT / "README.md", ROOT / "README_ja.md", *ROOT.glob("workshop/**/README*.md")]
    missing = []
    for page in pages:
        for file, test in TEST_NAMED.findall(page.read_text(encoding="utf-8")):
            path = ROOT / file
            if not path.is_file():
                missing.append(f"{page.relative_to(ROOT)}: {file}")
            elif test and not re.search(rf"^def {test}\(", path.read_text(encoding="utf-8"), re.M):
                missing.append(f"{page.relative_to(ROOT)}: {file}::{test}")
    assert missing == [], "tests the pages name and tests/ does not have:\n" + "\n".join(missing)


# -- sections of the scripts
# -----------------------------------------------------------------------------------


def section_names(script: str) -> list[str]:
    return [
        match[1]
        for line in (ROOT / script).read_text(encoding="utf-8").splitlines()
        if (match := SECTION_HEADING.match(line))
    ]


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_sections_of_a_script_hold_every_line_after_its_first_heading(script):
    lines = (ROOT / script).read_text(encoding="utf-8").splitlines()
    first = next(number for number, line in enumerate(lines) if SECTION_HEADING.match(line))
    code = [line for line in lines[first:] if line.strip() and not SECTION_HEADING.match(line)]
    sections = script_sections(ROOT / script)
    assert list(sections) == section_names(script)
    assert [
        line for text in sections.values() for line in text.splitlines() if line.strip()
    ] == code
    assert all(
        text == text.strip("\n") + "\n" for text in sections.values()
    )  # no blank first or last line


@pytest.mark.parametrize("old, new", list(zip(SCRIPTS, SCRIPTS[1:], strict=False)))
def test_a_version_keeps_the_sections_of_the_one_before_in_the_same_order(old, new):
    kept = [name for name in section_names(new) if name in section_names(old)]
    assert kept == section_names(old), f"{new} lost or moved a section of {old}"


# -- the build
# -------------------------------------------------------------------------------------------------


def html_of(site: Path, language: str, page: str) -> str:
    folder = site / "ja" if language == "ja" else site
    url = "" if page == "index.md" else page.removesuffix(".md") + "/"
    return (folder / url / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES)
def test_the_language_switcher_leads_to_the_same_page(built_site, page):
    url = "" if page == "index.md" else page.removesuffix(".md") + "/"
    pages = {"en": f"https://site/{url}", "ja": f"https://site/ja/{url}"}
    for language, here in pages.items():
        links = dict(
            (hreflang, href)
            for href, hreflang in re.findall(
                r'<a href="([^"]*)" hreflang="(\w+)"[^>]*class="md-select__link"',
                html_of(built_site, language, page),
            )
        )
        assert {other: urljoin(here, href) for other, href in links.items()} == pages


def search_words(separator: str, text: str) -> list[str]:
    """What the site's search makes of a text, page or query: pieces between the separator's
    matches, lower-cased, as Material's search splits both (tests/test_browser.py runs the real
    one in a browser; this needs none)."""
    return [word.lower() for word in re.split(separator, text) if word]


def test_japanese_search_splits_pages_and_queries_alike_so_compounds_are_found(built_site):
    """Each glossary term, typed without spaces, splits into words that its page has (a query
    word matches a page word it begins, as Material adds a wildcard)."""
    assert '<html lang="ja"' in html_of(built_site, "ja", "index.md")
    assert '<html lang="en"' in html_of(built_site, "en", "index.md")
    index = json.loads(
        (built_site / "ja" / "search" / "search_index.json").read_text(encoding="utf-8")
    )
    separator = index["config"]["separator"]
    page_words = {}
    for doc in index["docs"]:
        page = doc["location"].split("#")[0]
        page_words.setdefault(page, set()).update(
            search_words(separator, f"{doc['title']} {doc['text']}")
        )
    for term, page in SEARCH_CASES["ja"]:
        words = search_words(separator, term)
        assert len(words) >= 1
        missing = [w for w in words if not any(have.startswith(w) for have in page_words[page])]
        assert not missing, f"{term!r} is split into {words}; {page} lacks {missing}"
    # Split where the script changes, not only at spaces: a compound is more than one word.
    assert search_words(separator, "コンテキスト予算") == ["コンテキスト", "予算"]


def code_blocks(html: str) -> list[list[str]]:
    """The lines of every code block on a built page, as a reader sees them (Markdown drops trailing
    spaces)."""
    texts = [
        unescape(re.sub(r"<[^>]+>", "", code))
        for code in re.findall(r"<code>(.*?)</code>", html, re.S)
    ]
    return [[line.rstrip() for line in text.splitlines()] for text in texts]


@pytest.mark.parametrize("old, new", list(zip(SCRIPTS, SCRIPTS[1:], strict=False)))
def test_the_generated_diff_is_the_diff_of_the_current_files(built_site, old, new):
    if not (ROOT / old).exists() or not (ROOT / new).exists():
        pytest.skip(f"{old} or {new} does not exist yet")
    expected = "".join(
        difflib.unified_diff(
            (ROOT / old).read_text(encoding="utf-8").splitlines(keepends=True),
            (ROOT / new).read_text(encoding="utf-8").splitlines(keepends=True),
            fromfile=old,
            tofile=new,
        )
    )
    name = f"diffs/{old[:2]}-to-{new[:2]}.diff"
    stored = (GENERATED / name).read_text(encoding="utf-8")
    assert stored == expected
    # A reader sees no trailing blank lines: a diff that ends on blank context lines loses them
    expected_lines = "".join(line.rstrip() + "\n" for line in expected.splitlines()).rstrip()
    for language, page in [(language, page) for language in DOCS for page in PAGES]:
        if f'"{name}"' in "\n".join(read_page(language, page)):
            shown = code_blocks(html_of(built_site, language, page))
            assert expected_lines.splitlines() in shown, (
                f"{language}/{page} shows another diff"
            )


def test_the_publishing_workflow_builds_with_the_readmes_command_on_every_push_to_main():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "docs.yml").read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["push"]["branches"] == ["main"]
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    commands = [step["run"] for step in steps if "run" in step]
    assert "python -m docsgen" in commands
    for readme in ("README.md", "README_ja.md"):
        assert "`python -m docsgen`" in (ROOT / readme).read_text(encoding="utf-8")
    uploads = [step for step in steps if step.get("uses", "").startswith("actions/upload-pages")]
    assert [step["with"]["path"] for step in uploads] == ["site"]
    assert any(step.get("uses", "").startswith("actions/deploy-pages") for step in steps)


def test_a_plain_mkdocs_build_stops_with_one_line_and_deletes_nothing(tmp_path):
    site = tmp_path / "site"
    (site / "ja").mkdir(parents=True)
    (site / "ja" / "index.html").write_text("the Japanese site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={
            **{key: value for key, value in os.environ.items() if key != "BUILT_BY_DOCSGEN"},
            "NO_MKDOCS_2_WARNING": "1",
        },
    )
    said = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode != 0 and len(said) == 1, said
    assert "python -m docsgen" in said[0]
    assert (site / "ja" / "index.html").read_text() == "the Japanese site"


def test_only_a_run_that_may_read_the_site_builds_it_and_stopping_the_build_stops_all_it_started(
    tmp_path,
):
    """An attendee's `python -m pytest workshop/01-search-tool` starts no docs build, a run of
    tests/ starts one at once in the background; if the run ends first, it stops the build and
    the processes the build started (demos, benchmarks), not only the first."""
    assert reads_the_site(ROOT) and reads_the_site(ROOT / "tests")
    assert reads_the_site(ROOT / "tests" / "test_browser.py")
    assert not reads_the_site(ROOT / "workshop" / "01-search-tool")
    assert not reads_the_site(ROOT / "workshop")
    assert not reads_the_site(ROOT / "tests" / "agents.py")
    started = tmp_path / "grandchild"
    # In Python, not sh: Windows has no sh, and MSYS2's $$ is not the Windows process id.
    grandchild = (f"import os, time; open({str(started)!r}, 'w').write(str(os.getpid())); "
                  "time.sleep(30)")
    build = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {grandchild!r}])"
    process = start_in_background([sys.executable, "-c", build], tmp_path / "log")
    deadline = time.monotonic() + 10
    while not started.exists() or not started.read_text().strip():
        assert time.monotonic() < deadline, "the stand-in build never started its child"
        time.sleep(0.02)
    stop_group(process)
    assert not runs_after_a_moment(int(started.read_text())), (
        "a process the build started outlived it"
    )


# -- numbers and transcripts: made by the build, the same on every build
# -------------------------------------------------------------------------------------------------

QUOTED_FIGURE = re.compile(r"\b\d{1,3}(?:,\d{3})+\b|\b\d+\.\d+\b")  # 4,941 or 0.049, not 20 or v3


def test_figures_in_the_v3_chapter_are_made_by_the_build_not_typed():
    """The chapter's sizes, ratios, token counts and times are {{ placeholders }}; a figure such as
    4,939 or 1.09 typed into the prose would drift from what the code produces."""
    for language in DOCS:
        prose, _ = split_fences(read_page(language, "v3.md"))
        typed = [
            figure
            for line in prose
            if "{{" not in line or QUOTED_FIGURE.search(PLACEHOLDER.sub("", line))
            for figure in QUOTED_FIGURE.findall(PLACEHOLDER.sub("", line))
        ]
        # the one example of a finished status line is a format, not a measurement
        assert [figure for figure in typed if figure != "0.5"] == [], (language, typed)


def test_the_quoted_numbers_are_what_the_code_and_the_demo_produce(built_site):
    numbers = json.loads((GENERATED / "numbers.json").read_text(encoding="utf-8"))
    transcript = (GENERATED / "transcripts" / "v3.txt").read_text(encoding="utf-8")
    # all the input of a call: what the cache neither read nor wrote, wrote, and read
    lines = re.findall(
        r"^  \[tokens: in ([\d,]+), out [\d,]+, cache write ([\d,]+), cache read ([\d,]+)\]",
        transcript,
        re.M,
    )
    totals = [sum(int(figure.replace(",", "")) for figure in line) for line in lines[:2]]
    first, second = [f"{total:,}" for total in totals]
    assert (numbers["v3.demo_input_first"], numbers["v3.demo_input_second"]) == (first, second)
    status = (ROOT / "plumbing" / "status.py").read_text()
    tick = re.search(r"^PROGRESS_TICK = ([\d.]+)", status, re.M)[1]
    assert numbers["v3.progress_tick"] == str(ast.literal_eval(tick))
    ratio = int(numbers["hygiene.delegated"].replace(",", "")) / int(
        numbers["hygiene.inline"].replace(",", "")
    )
    assert numbers["hygiene.ratio"] == f"{ratio:.3f}"
    page = html_of(built_site, "en", "v3.md")
    assert f"from {first} to {second}" in page and f"{numbers['hygiene.delegated']} bytes" in page


def test_the_changed_lines_the_pages_quote_are_counted_as_the_diff_budget_counts_them():
    for old, new in zip(SCRIPTS, SCRIPTS[1:], strict=False):
        older, newer = ((ROOT / script).read_text(encoding="utf-8") for script in (old, new))
        counted = removed_or_changed(older.splitlines(), newer.splitlines())
        assert changed_lines(older, newer) == len(counted), (old, new)


def test_a_transcript_is_the_same_whatever_the_threads_and_the_clock_did():
    ran_once = (
        '> Task {"description": "b"}\n[explore] b … started\n> Task {"description": "a"}\n'
        "[explore] a … started\n[explore] a done (2 tools, 0.3 s)\n"
    )
    ran_again = (
        '> Task {"description": "a"}\n> Task {"description": "b"}\n[explore] b … started\n'
        "[explore] a … started\n[explore] a done (2 tools, 0.7 s)\n"
        "[read_only_bash: read-only is enforced by parsing only here (bubblewrap is missing)]\n"
    )
    model_order = ["b", "a"]  # the model called b first: the transcript keeps its order
    assert steady(ran_once, model_order) == steady(ran_again, model_order)
    assert steady(ran_once, model_order).splitlines() == [
        '> Task {"description": "b"}',
        "[explore] b … started",
        '> Task {"description": "a"}',
        "[explore] a … started",
        "[explore] a done (2 tools, n.n s)",
    ]


def test_the_v3_transcript_shows_parallel_calls_in_the_models_order(built_site):
    transcript = (GENERATED / "transcripts" / "v3.txt").read_text(encoding="utf-8")
    recording = json.loads((GENERATED / "hood" / "records" / "v3.json").read_text())
    calls = [line for line in transcript.splitlines() if line.startswith("> Task ")]
    shown = [re.search(r'"description": "([^"]*)"', line)[1] for line in calls]
    assert shown == task_call_order(recording)[: len(shown)]
    assert "bubblewrap" not in transcript  # the same wherever the site is built


def test_the_v3_demo_runs_the_seeds_flow_explorers_then_a_planner_then_a_coder(built_site):
    """main agent -> explore finds (two at once), plan designs, code implements; the main agent
    coordinates and checks, and writes no file itself (issue 32: a `code` subagent once appeared
    only in a table cell)."""
    transcript = (GENERATED / "transcripts" / "v3.txt").read_text(encoding="utf-8")
    started = re.findall(r"^\[(\w+)\] .* … started$", transcript, re.M)
    assert started == ["explore", "explore", "plan", "code"]
    own_calls = re.findall(r"^> (\w+) ", transcript, re.M)
    assert "edit_file" not in own_calls and "write_file" not in own_calls, own_calls
    assert re.search(r"^\[code\] .* done \(\d+ tools", transcript, re.M)


def test_the_built_transcripts_hold_no_temporary_folder_and_no_clock(built_site):
    for transcript in (GENERATED / "transcripts").glob("*.txt"):
        text = transcript.read_text(encoding="utf-8")
        assert not re.search(r"agent-demo-v\d-\w", text), transcript.name  # a random folder name
        assert not re.search(r"tools?, \d+\.\d s\)", text), transcript.name


def test_a_section_shown_on_a_page_numbers_its_lines_as_the_file_does(built_site):
    page = html_of(built_site, "en", "v1.md")
    at = page.index(V1_ORDER["the real loop"])  # not the ten-line loop above it
    shown = re.findall(r'id="__codelineno-\d+-(\d+)"', page[:at])[-1]
    lines = (ROOT / "v1_basic.py").read_text(encoding="utf-8").splitlines()
    assert lines[int(shown) - 1].startswith("def agent_loop(")


def about(text: str, before: str) -> int:
    """The number a page gives as `about N` just before some words."""
    return int(re.search(rf"about ([\d,]+) {before}", text)[1].replace(",", ""))


def test_sizes_the_v4_chapter_states_in_prose_are_those_of_the_skills(agent_v4_catalogue):
    page = " ".join(read_page("en", "v4.md"))
    japanese = " ".join(read_page("ja", "v4.md"))
    stated = about(page, "characters,")
    assert abs(stated - len(agent_v4_catalogue)) <= 10, (stated, len(agent_v4_catalogue))
    assert f"約 {stated:,} 文字" in japanese
    shared = ROOT.parent / "shared" / "third_party_skills" / "mcp-builder"
    if not shared.exists():
        pytest.skip("../shared/ is not beside the project: mcp-builder's sizes are not checked")
    instructions = len((shared / "SKILL.md").read_text(encoding="utf-8"))
    reference = sum(
        path.stat().st_size for path in (shared / "reference").rglob("*") if path.is_file()
    )
    assert abs(about(page, "characters of\n? *instructions") - instructions) <= 100
    assert abs(about(page, "bytes of reference") - reference) <= 1000
    for english in (
        about(page, "characters of\n? *instructions"),
        about(page, "bytes of reference"),
    ):
        assert f"{english:,}" in japanese


@pytest.fixture
def agent_v4_catalogue(monkeypatch) -> str:
    from tests.agents import load_agent

    monkeypatch.delenv("SKILLS_DIR", raising=False)
    v4 = load_agent("v4")
    return v4.catalogue(v4.load_skills(v4.skill_sources([])))


def test_no_page_shows_a_placeholder_instead_of_its_number(built_site):
    """The pages' own text, that is: "Under the hood" shows each request as the API received it,
    and in v6 a tool result quotes the docs' Markdown source, {{ placeholders }} and all."""
    for language in DOCS:
        for page in PAGES:
            html = html_of(built_site, language, page)
            own = re.sub(r'<section class="hood".*?</section>', "", html, flags=re.S)
            text = re.sub(r"<[^>]+>", "", own)
            assert not re.search(r"\{\{.*?\}\}", text), (language, page)


def test_the_ten_line_loop_of_the_v1_chapter_runs_against_the_scripted_model(
    scripted_api, tmp_path, monkeypatch
):
    """The loop's essence, shown before the real one, really works: with v1's tools it writes a
    file the model asked for and returns the model's last text."""
    from examples.loop_essence import agent_loop
    from tests.agents import load_agent

    monkeypatch.chdir(tmp_path)
    v1 = load_agent("v1")
    scripted_api.play({"turns": [
        {"tool_calls": [{"name": "write_file", "input": {"path": "hi.txt", "content": "hi"}}]},
        {"text": "Wrote hi.txt."},
    ]})
    messages = [{"role": "user", "content": "write hi.txt"}]
    answer = agent_loop(v1.client, v1.MODEL_ID, v1.TOOLS, v1.TOOL_HANDLERS, messages)
    assert answer == "Wrote hi.txt." and (tmp_path / "hi.txt").read_text() == "hi"
    assert [message["role"] for message in messages] == ["user", "assistant", "user", "assistant"]
    source = (ROOT / "examples" / "loop_essence.py").read_text(encoding="utf-8")
    essence = source.split("[start:essence]\n")[1].split("# --8<-- [end:essence]")[0]
    assert len(essence.strip().splitlines()) <= 12


# The v1 chapter, concrete first (issue 24): what a reader meets, in this order, on the built page.
# Each is found by its code, so the check holds in both languages.
V1_ORDER = {
    "the ten-line loop": '<span class="nf">agent_loop</span><span class="p">(</span>'
    '<span class="n">client</span>',
    "the demo's transcript": "$ python -m scripted.demo v1",
    "the first call of the request inspector": '<details class="hood-call',
    "the real loop": '<span class="nf">agent_loop</span><span class="p">(</span>'
    '<span class="n">messages</span>',
    "the stop_reason table": "<th><code>stop_reason</code></th>",
    "the configuration": '<span class="n">load_dotenv</span>',
}
OPENING_WORDS = 1200  # English words before the inspector's first call; it was 2,650 (issue 24)
OPENING_SHARE = 0.25  # of the chapter's text, in either language


def article_text(html: str) -> str:
    """The words of a built page's article as a reader reads them: code, charts and the requests
    of "Under the hood" left out."""
    article = html[html.index("<article") : html.index("</article>")]
    article = re.sub(r"<(pre|svg|section)\b.*?</\1>", " ", article, flags=re.S)
    article = re.sub(r'<a class="headerlink".*?</a>', " ", article)  # a heading's ¶
    return unescape(re.sub(r"<[^>]+>", " ", article))


@pytest.mark.parametrize("language", DOCS)
def test_the_v1_chapter_shows_the_loop_the_demo_and_two_requests_before_the_real_loop(
    built_site, language
):
    html = html_of(built_site, language, "v1.md")
    article = html[html.index("<article") :]
    found = {what: article.find(marker) for what, marker in V1_ORDER.items()}
    assert -1 not in found.values(), [what for what, at in found.items() if at == -1]
    assert sorted(found, key=found.get) == list(V1_ORDER), found
    first_call = found["the first call of the request inspector"]
    before = article_text(article[:first_call] + "</article>")
    whole = article_text(html)
    if language == "en":
        assert len(before.split()) <= OPENING_WORDS, len(before.split())
    share = len(re.sub(r"\s", "", before)) / len(re.sub(r"\s", "", whole))
    assert share <= OPENING_SHARE, f"{share:.0%} of the chapter comes before the first request"
    first, rest = re.findall(r'<section class="hood"[^>]*data-part="(\w+)"', html)
    assert (first, rest) == ("first", "rest")


def test_the_alternate_links_name_each_language_root_on_this_copy_of_the_site(built_site):
    """Material reads <alternate>/sitemap.xml for every <link rel="alternate">: a link to the page
    itself asked for <page>/sitemap.xml, which does not exist, and an absolute address sent a
    reader of a local copy to the published site."""
    roots = {"en": "https://site/repo/", "ja": "https://site/repo/ja/"}
    for language, root in roots.items():
        for page in PAGES:
            url = root + ("" if page == "index.md" else page.removesuffix(".md") + "/")
            links = re.findall(
                r'<link rel="alternate" href="([^"]*)" hreflang="(\w+)">',
                html_of(built_site, language, page),
            )
            assert {hreflang: urljoin(url, href) for href, hreflang in links} == roots, url


def test_the_readmes_link_the_published_site_and_name_the_python_they_need():
    """The address is mkdocs.yml's site_url, the one place it is written; the version is the one
    the code is written for (ruff's target-version) and the setup page names."""
    config = yaml.safe_load(
        "\n".join(
            line
            for line in (ROOT / "mkdocs.yml").read_text(encoding="utf-8").splitlines()
            if line.startswith("site_url:")
        )
    )
    site = config["site_url"]
    target = re.search(
        r'target-version = "py3(\d+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    )
    python = f"Python 3.{target[1]}"
    said = {"README.md": f"{python} or newer", "README_ja.md": f"{python} 以降"}
    for readme, needs in said.items():
        text = (ROOT / readme).read_text(encoding="utf-8")
        assert f"<{site}>" in text and f"<{site}ja/>" in text, readme
        assert needs in text, readme
    assert f"{python} or newer" in "\n".join(read_page("en", "setup.md"))
    assert f"{python} 以降" in "\n".join(read_page("ja", "setup.md"))


OUTSIDE_LINK = re.compile(r"\]\((https?://[^)\s]+)\)")  # a Markdown link to another site


@pytest.mark.parametrize("page", PAGES)
def test_both_languages_link_the_same_outside_sources(page):
    links = {
        language: sorted(set(OUTSIDE_LINK.findall("\n".join(read_page(language, page)))))
        for language in DOCS
    }
    assert links["en"] == links["ja"]


# Each fact the Context budget chapter takes from elsewhere, and where a reader can check it.
CONTEXT_BUDGET_SOURCES = {
    "the gistdex case": "https://github.com/ushironoko/gistdex/",
    "Claude Code's limit on MCP output": "https://code.claude.com/docs/en/mcp#",
    "Claude Code's limit on bash output": "https://code.claude.com/docs/en/settings#",
    "Anthropic's advice on tools": "https://www.anthropic.com/engineering/writing-tools-for-agents",
}


def test_the_context_budget_chapter_links_the_source_of_each_outside_fact():
    for language in DOCS:
        links = OUTSIDE_LINK.findall("\n".join(read_page(language, "context-budget.md")))
        missing = [
            fact
            for fact, source in CONTEXT_BUDGET_SOURCES.items()
            if not any(link.startswith(source) for link in links)
        ]
        assert not missing, (language, missing)


def test_japanese_search_splits_the_katakana_compounds_the_pages_use_into_their_words():
    from docsgen.search import compounds, japanese_separator

    words = {"プロンプト", "キャッシュ", "プロンプトキャッシュ", "サブエージェント", "エージェント"}
    # サブ never stands alone, so サブエージェント is one word; the pages' words decide
    assert compounds(words) == {"プロンプトキャッシュ": ["プロンプト", "キャッシュ"]}
    config = yaml.safe_load(
        "\n".join(
            line
            for line in (ROOT / "mkdocs.ja.yml").read_text(encoding="utf-8").splitlines()
            if "!!python" not in line
        )
    )
    base = next(plugin["search"] for plugin in config["plugins"] if "search" in plugin)
    separator = japanese_separator(base["separator"], DOCS["ja"])
    for compound, parts in [
        ("プロンプトキャッシュ", ["プロンプト", "キャッシュ"]),
        ("コンテキストウィンドウ", ["コンテキスト", "ウィンドウ"]),
        ("エージェントループ", ["エージェント", "ループ"]),
        ("ワークショップ", ["ワークショップ"]),
        ("サブエージェント", ["サブエージェント"]),
    ]:
        assert search_words(separator, compound) == parts
