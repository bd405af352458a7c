"""Tests for text.slugify: titles become lowercase, hyphenated names for URLs.

A starting file: rename the module, the function and the cases; keep the shape.
"""

import pytest
from text import slugify  # the code under test, imported the way the project's own tests do

@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Hello World", "hello-world"),  # the normal case
        ("  spaced   out  ", "spaced-out"),  # an edge: extra whitespace
        ("Ünïcödé", "unicode"),  # an edge: accents
    ],
)
def test_slugify_makes_lowercase_hyphenated_names(title, expected):
    assert slugify(title) == expected


def test_slugify_rejects_an_empty_title():
    with pytest.raises(ValueError, match="empty"):
        slugify("   ")
