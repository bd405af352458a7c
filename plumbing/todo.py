"""v2+: the todo list's rules, and how the list is shown."""

from plumbing.budget import cut_short
from plumbing.screen import plain

def shorten(text: str, width: int = 60) -> str:
    """One line of at most `width` characters, with no escape codes."""
    return cut_short(plain(" ".join(text.split())), width)


def first_broken_rule(items: list[dict], limit: int, marks: dict) -> str | None:
    """The first rule the new list breaks, naming the item that breaks it; None if it keeps them."""
    if len(items) > limit:
        return (f"{len(items)} items, but a list holds at most {limit}; merge small steps "
                "into larger ones")
    labels = [item_label(number, item) for number, item in enumerate(items, 1)]
    for label, item in zip(labels, items, strict=True):
        if item["status"] not in marks:
            return f"{label} has status {item['status']!r}; use one of {', '.join(marks)}"
        for field in ("content", "activeForm"):
            if not item[field].strip():
                return (f"{label} has an empty {field}; every item needs both content and "
                        "activeForm")
    working = [label for label, item in zip(labels, items, strict=True)
               if item["status"] == "in_progress"]
    if len(working) > 1:
        return (f"at most one item may be in_progress, but {' and '.join(working)} are; mark the "
                "finished one completed, or set the others back to pending")
    return None


def item_label(number: int, item: dict) -> str:
    """How an error names an item: its number, and its text when it has one."""
    if not item["content"].strip():
        return f"item {number}"
    return f"item {number} ({shorten(item['content'], 40)!r})"


def without_edge_spaces(item: dict) -> dict:
    return {"content": item["content"].strip(), "status": item["status"],
            "activeForm": item["activeForm"].strip()}


def render_todos(items: list[dict], marks: dict) -> str:
    """The plan as the user sees it each time it changes."""
    if not items:
        return "  (the todo list is empty)"
    lines = []
    for item in items:
        line = f"  {marks[item['status']]} {shorten(item['content'], 90)}"
        if item["status"] == "in_progress":
            line += f" ({shorten(item['activeForm'])})"
        lines.append(line)
    done = sum(item["status"] == "completed" for item in items)
    lines.append(f"  {done}/{len(items)} done")
    return "\n".join(lines)


def open_todos_reminder(rounds: int, summary: str) -> dict:
    return {"type": "text", "text": (
        f"<reminder>You have not updated the todo list for {rounds} rounds of tool "
        f"calls, and it has open items ({summary}). Mark what you finished completed and "
        "what you work on in_progress; if the plan changed, rewrite it.</reminder>")}


def has_todo_tool(tools: list) -> bool:
    return any(tool["name"] == "todo" for tool in tools)
