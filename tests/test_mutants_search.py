"""docsgen/search.py: a katakana word one character long splits no compound.

The pages hold single katakana characters among other text (a ト or a ー on its own), and
katakana_words() counts each as a word. A split made at one of them would cut words that are
not compounds: イウア into イウ + ア. Mutation testing found no test that tells apart the
ranges of parts_of() that let a part shorter than SHORTEST_PART in."""

from docsgen.search import compound_splits, compounds

def test_a_one_character_word_splits_nothing_and_two_characters_do():
    words = {"ア", "イウ", "イウア", "プロ", "キャッシュ", "プロキャッシュ"}
    assert compounds(words) == {"プロキャッシュ": ["プロ", "キャッシュ"]}
    assert compound_splits(words) == ["(?<=プロ)(?=キャッシュ)"]


def test_of_two_splits_as_short_the_one_found_first_is_kept():
    """アイウエオカ is アイ + ウエオカ and アイウエ + オカ: one split is added, the same on every
    build, the one whose first part ends first."""
    words = {"アイ", "ウエオカ", "アイウエ", "オカ", "アイウエオカ"}
    assert compounds(words) == {"アイウエオカ": ["アイ", "ウエオカ"]}
