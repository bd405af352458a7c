"""plumbing/todo.py: what the model reads when its list breaks a rule, and its reminder, word for
word (the mutation run of 2026-11-28 found each sentence's advice unread by any test)."""

from plumbing.todo import first_broken_rule, open_todos_reminder

MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


def item(content: str, status: str = "pending", active: str = "Doing it") -> dict:
    return {"content": content, "status": status, "activeForm": active}


def test_a_list_too_long_is_told_its_length_the_limit_and_to_merge_steps():
    items = [item(f"step {number}") for number in range(1, 5)]
    assert first_broken_rule(items, 3, MARKS) == (
        "4 items, but a list holds at most 3; merge small steps into larger ones")
    assert first_broken_rule(items, 4, MARKS) is None


def test_a_status_no_mark_has_is_named_with_the_statuses_there_are():
    """The schema's enum is a hint some endpoints do not enforce: the model may send "done"."""
    items = [item("Read the code", "completed"), item("Fix the bug", "done")]
    assert first_broken_rule(items, 10, MARKS) == (
        "item 2 ('Fix the bug') has status 'done'; use one of pending, in_progress, completed")


def test_an_empty_active_form_is_named_by_its_field():
    items = [item("Read the code"), item("Fix the bug", active="  ")]
    assert first_broken_rule(items, 10, MARKS) == (
        "item 2 ('Fix the bug') has an empty activeForm; every item needs both content and "
        "activeForm")


def test_two_items_in_progress_are_both_named_with_the_way_out():
    items = [item("Read", "in_progress"), item("Plan"), item("Fix", "in_progress")]
    assert first_broken_rule(items, 10, MARKS) == (
        "at most one item may be in_progress, but item 1 ('Read') and item 3 ('Fix') are; mark "
        "the finished one completed, or set the others back to pending")


def test_the_reminder_names_the_rounds_the_open_items_and_what_to_do():
    assert open_todos_reminder(5, "2 open: Fix the bug") == {"type": "text", "text": (
        "<reminder>You have not updated the todo list for 5 rounds of tool calls, and it has "
        "open items (2 open: Fix the bug). Mark what you finished completed and what you work "
        "on in_progress; if the plan changed, rewrite it.</reminder>")}
