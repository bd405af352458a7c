"""Japanese search: long katakana compounds are split into the words they are made of.

mkdocs.ja.yml's separator splits Japanese where the script changes, so a katakana run such as
プロンプトキャッシュ stays one word, and a reader who types キャッシュ does not find the pages that
say プロンプトキャッシュ (a query word only matches the words it begins). Japanese writes no space
inside such a compound, but the pages themselves say where its parts are: キャッシュ and プロンプト
also stand alone elsewhere. So, with no dictionary and no network:

    1. every katakana run on the Japanese pages is a word the pages use;
    2. a run that is a sequence of two or more other such words is a compound of them;
    3. the separator gains a split between each two neighbouring parts:
       (?<=プロンプト)(?=キャッシュ).

The same separator splits the pages when the browser builds the index and the query as the reader
types it, so プロンプトキャッシュ typed in one go becomes プロンプト + キャッシュ on both sides.
docsgen/hooks.py adds the splits to the Japanese site's search settings at build time.
"""

import re
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path

KATAKANA_RUN = re.compile(r"[ァ-ヺー]+")
SHORTEST_PART = 2  # characters: a one-character "word" would split almost anything


def katakana_words(texts: Iterable[str]) -> set[str]:
    return {run for text in texts for run in KATAKANA_RUN.findall(text)}


def parts_of(word: str, words: set[str]) -> list[str] | None:
    """The fewest other known words that make up `word` exactly, or None if none do."""
    fewest: dict[int, list[str]] = {0: []}  # by length of the beginning covered so far
    for end in range(len(word) + 1):
        for start in range(end - SHORTEST_PART + 1):  # none while end < SHORTEST_PART
            part = word[start:end]
            if start not in fewest or part == word or part not in words:
                continue
            candidate = fewest[start] + [part]
            if end not in fewest or len(candidate) < len(fewest[end]):
                fewest[end] = candidate
    return fewest.get(len(word))


def compounds(words: set[str]) -> dict[str, list[str]]:
    """Each compound among the words, with its parts."""
    found = {}
    for word in sorted(words):
        parts = parts_of(word, words)
        if parts:  # never the word alone: parts_of() takes no part that is the whole word
            found[word] = parts
    return found


def compound_splits(words: set[str]) -> list[str]:
    """One separator alternative per pair of neighbouring parts, in a stable order."""
    pairs = {
        (left, right)
        for parts in compounds(words).values()
        for left, right in pairwise(parts)
    }
    return [f"(?<={left})(?={right})" for left, right in sorted(pairs)]


def japanese_separator(base: str, docs_dir: Path) -> str:
    """The site's separator, with a split inside each compound the pages use."""
    texts = [path.read_text(encoding="utf-8") for path in sorted(docs_dir.glob("**/*.md"))]
    return "|".join([base, *compound_splits(katakana_words(texts))])
