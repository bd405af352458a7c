"""One term per idea, in both languages: the glossary decides, and every page follows.

The glossary's conventions list each choice in words a reader can follow ("作業ディレクトリ
（作業フォルダとは書かない）", '"work directory", never "work folder"'); these tests read the
choices from there, so the glossary stays the one place that decides. They read the Markdown
only: nothing to build, nothing to install.
"""

import re
from pathlib import Path

import pytest

from scripted import ROOT

DOCS = {"en": ROOT / "docs_en", "ja": ROOT / "docs_ja"}
PAGES = sorted(path.name for path in DOCS["en"].glob("*.md"))
READMES = {"en": ROOT / "README.md", "ja": ROOT / "README_ja.md"}

FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
INLINE_CODE = re.compile(r"`[^`\n]+`")
SECTION_NAME = re.compile(r"\bplumbing/[\w<>.]+")  # a part of the scripts, named as in the code
PLACEHOLDER = re.compile(r"\{\{.*?\}\}")  # {{ plumbing.prompt.SECOND_CTRL_C }}: a number's name
# A conventions item: 作業ディレクトリ（作業フォルダとは書かない）
JA_CHOICE = re.compile(r"^\s*- (?P<use>[^（\n]+)（(?P<not>[^（）\n]+?)とは書かない")
EN_CHOICE = re.compile(r'^\s*- "(?P<use>[^"]+)", never "(?P<not>[^"]+)"')
# Python names in backquotes, as a page names a function or a class: `LockedScreen`, `run()`
CODE_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\(\))?)`")

# The pairs the Japanese pages drifted between (issue 24): the glossary must decide each one.
DRIFTED = [
    "作業フォルダー",
    "返答",
    "パース",
    "plumbing",
    "2 つめ",
    "ToDo ツール",
    "todo ツール",
    "段階的な開示",
    "スクリプト化モデル",
    "抜け道",
    "単語",  # the shell's words: the command's name and its arguments (issue 32)
    "文脈",  # context, as Anthropic's Japanese docs write it (issue 39)
]
# The glossary's long-vowel rule: a list item that names the words written with the mark at the
# end (サーバー, フォルダー) and one that names those written without it (メモリ, ディレクトリ).
WITH_MARK = re.compile(r"^\s*- 英語の語末が [^:]*は付ける。[^:]*: (?P<words>.+)$")
WITHOUT_MARK = re.compile(r"^\s*- 英語の語末が [^:]*は、?[^:]*付けない: (?P<words>.+)$")
KATAKANA_RUN = re.compile(r"[ァ-ヺー]+")
# Every Japanese text a reader reads: the pages, the README and the workshop's instructions.
JAPANESE_TEXTS = [
    *sorted(DOCS["ja"].glob("*.md")),
    READMES["ja"],
    *sorted((ROOT / "workshop").glob("**/README_ja.md")),
]

# Words with one meaning each, in both languages: (English, Japanese). The count per page must
# agree, so a word used for a second idea in one language shows.
ONE_MEANING = [(r"\bladders?\b", "はしご"), (r"\bfenc(?:e|es|ed)\b", "柵")]


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


CONVENTIONS = {"en": "## Conventions", "ja": "## 表記の決まり"}


def conventions(language: str) -> str:
    text = read(DOCS[language] / "glossary.md")
    return text[text.index(CONVENTIONS[language]) :]


def banned(language: str) -> dict[str, str]:
    """Each variant the glossary rules out, with the term to use instead."""
    pattern = JA_CHOICE if language == "ja" else EN_CHOICE
    found = {}
    for line in conventions(language).splitlines():
        if match := pattern.match(line):
            for variant in re.split(r"、|, ", match["not"]):
                found[variant.strip()] = match["use"].strip()
    return found


def outside_code(text: str) -> list[tuple[int, str]]:
    """The numbered lines outside code blocks; a diagram's lines are kept (its labels are
    words)."""
    lines, fence, diagram = [], None, False
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if fence is None and match:
            fence, diagram = match[1], match[2] == "mermaid"
        elif fence is not None and line.strip() == fence:
            fence, diagram = None, False
        elif fence is None or diagram:
            lines.append((number, line))
    return lines


def prose(language: str, page: str) -> list[tuple[int, str]]:
    """The lines a reader reads as words, numbered: code in blocks and in backquotes left out.
    On the glossary the conventions are left out (they name the variants to avoid), and so is
    each row's column in the other language."""
    path = READMES[language] if page == "README" else DOCS[language] / page
    text = read(path)
    if page == "glossary.md":
        text = text[: text.index(CONVENTIONS[language])]
    found = []
    for number, line in outside_code(text):
        if page == "glossary.md" and line.startswith("|"):
            cells = line.split("|")
            line = "|".join(cells[:2] + cells[3:])
        line = PLACEHOLDER.sub("", INLINE_CODE.sub("", line))
        found.append((number, SECTION_NAME.sub("", line)))
    return found


def test_the_glossary_decides_each_pair_that_drifted():
    assert sorted(set(DRIFTED) - set(banned("ja"))) == []
    assert banned("en") == {"work folder": "work directory"}


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("page", [*PAGES, "README"])
def test_no_page_uses_a_variant_the_glossary_rules_out(language, page):
    rules = banned(language)
    found = [
        f"line {number}: {variant!r}, use {use!r}"
        for number, line in prose(language, page)
        for variant, use in rules.items()
        if variant.lower() in line.lower()
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "path", sorted((ROOT / "workshop").glob("**/README_ja.md")),
    ids=lambda path: path.relative_to(ROOT).as_posix(),
)
def test_no_workshop_instructions_use_a_variant_the_glossary_rules_out(path):
    rules = banned("ja")
    found = [
        f"line {number}: {variant!r}, use {use!r}"
        for number, line in japanese_prose(path)
        for variant, use in rules.items()
        if variant.lower() in line.lower()
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("page", [page for page in PAGES if page != "glossary.md"])
def test_a_word_with_one_meaning_is_used_as_often_in_both_languages(page):
    english = "\n".join(line for _, line in prose("en", page))
    japanese = "\n".join(line for _, line in prose("ja", page))
    differ = [
        f"{word}: {len(re.findall(word, english, re.I))} in English, "
        f"{japanese_word}: {japanese.count(japanese_word)} in Japanese"
        for word, japanese_word in ONE_MEANING
        if len(re.findall(word, english, re.I)) != japanese.count(japanese_word)
    ]
    assert not differ, differ


@pytest.mark.parametrize("page", PAGES)
def test_the_japanese_page_names_every_function_and_class_the_english_one_names(page):
    def named(language: str) -> set[str]:
        text = "\n".join(line for _, line in outside_code(read(DOCS[language] / page)))
        return {
            name
            for name in CODE_NAME.findall(text)
            if "_" in name or name.endswith("()") or not name.islower()
        }

    assert sorted(named("en") - named("ja")) == []


# Wording that misled readers once; each came back at least once in review.
MISREAD = {
    "会場の真ん中": "the times follow the median pace of the room, not people in the middle",
    "貼り付けていません": "say where the code comes from: the real files, included at build time",
}


@pytest.mark.parametrize("page", PAGES)
def test_wording_that_misled_does_not_come_back(page):
    text = read(DOCS["ja"] / page)
    assert [why for phrase, why in MISREAD.items() if phrase in text] == []


def long_vowel_rule() -> tuple[list[str], list[str]]:
    """The words the glossary writes with a final ー, and those it writes without one."""
    with_mark, without_mark = [], []
    for line in conventions("ja").splitlines():
        if match := WITH_MARK.match(line):
            with_mark += re.split(r"、", match["words"].strip())
        elif match := WITHOUT_MARK.match(line):
            without_mark += re.split(r"、", match["words"].strip())
    return with_mark, without_mark


def japanese_prose(path: Path) -> list[tuple[int, str]]:
    if path.parent == DOCS["ja"]:
        return prose("ja", path.name)
    return [(number, INLINE_CODE.sub("", line)) for number, line in outside_code(read(path))]


def test_the_glossary_states_the_long_vowel_rule_with_words_on_both_sides():
    with_mark, without_mark = long_vowel_rule()
    assert {"サーバー", "ユーザー", "フォルダー", "パラメーター"} <= set(with_mark)
    assert {"メモリ", "ディレクトリ"} <= set(without_mark)
    assert all(word.endswith("ー") for word in with_mark)
    assert not any(word.endswith("ー") for word in without_mark)


@pytest.mark.parametrize("path", JAPANESE_TEXTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_a_japanese_text_writes_the_final_long_vowel_as_the_glossary_rules(path):
    with_mark, without_mark = long_vowel_rule()
    wrong = [(re.compile(f"{word[:-1]}(?!ー)"), word) for word in with_mark]
    wrong += [(re.compile(f"{word}ー"), word) for word in without_mark]
    found = [
        f"{path.name} line {number}: {match[0]!r}, write {word!r}"
        for number, line in japanese_prose(path)
        for pattern, word in wrong
        for match in pattern.finditer(line)
    ]
    assert not found, "\n".join(found)


def test_no_word_is_written_both_with_and_without_a_final_long_vowel():
    """A word the rule's lists do not name: the pages agree with one another. Words of three
    characters or more, so that a short ending (キー, コピー) does not match inside another word."""
    places: dict[str, list[str]] = {}
    for path in JAPANESE_TEXTS:
        for number, line in japanese_prose(path):
            for run in KATAKANA_RUN.findall(line):
                places.setdefault(run, []).append(f"{path.relative_to(ROOT).as_posix()}:{number}")
    both = [
        f"{marked} ({places[marked][0]}) and {plain} ({places[plain][0]})"
        for marked in places
        if marked.endswith("ー") and len(marked) > 3
        for plain in places
        if plain.endswith(marked[:-1]) and not plain.endswith("ー")
    ]
    assert not both, "\n".join(both)
