"""plumbing/todo.py: how long a shown todo label may be."""

from plumbing.todo import item_label, render_todos, shorten

def test_a_label_is_cut_to_exactly_its_width_with_an_ellipsis():
    assert shorten("x" * 60) == "x" * 60
    assert shorten("x" * 61) == "x" * 59 + "…"
    assert shorten("word " * 20, 10) == "word word…"


def test_the_list_cuts_an_item_at_90_characters_and_an_error_names_it_in_40():
    item = {"content": "c" * 100, "status": "pending", "activeForm": "a"}
    assert render_todos([item], {"pending": "[ ]"}) == f"  [ ] {'c' * 89}…\n  0/1 done"
    assert item_label(3, item) == f"item 3 ('{'c' * 39}…')"


def test_the_list_shows_its_items_without_control_sequences():
    hostile = "a\x1b]0;title\x07b\x9b2Jc"  # a window title, and the 8-bit CSI
    items = [{"content": hostile, "status": "in_progress", "activeForm": hostile}]
    assert render_todos(items, {"in_progress": "[>]"}) == "  [>] a?b?c (a?b?c)\n  0/1 done"
