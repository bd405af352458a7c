"""The context budget: one limit for every tool result, and a cut that says what was left out."""

NOTE_ROOM = 400  # characters kept free for the note that says what was cut


def clip(text: str, budget: int) -> str:
    """Keep the head and tail of a long result, and say what was cut and how to get the rest."""
    if len(text) <= budget:
        return text
    keep = max(budget - NOTE_ROOM, 0)
    head = text[:keep * 2 // 3]
    tail = text[len(text) - keep // 3:]
    return head + cut_note(text, head, tail) + tail


def cut_note(text: str, head: str, tail: str) -> str:
    cut = text[len(head):len(text) - len(tail)]
    return (f"\n\n[... {len(cut):,} of {len(text):,} characters ({cut.count(chr(10)):,} lines) "
            "cut here to fit the context budget. Ask for less at a time: read_file with offset "
            "and limit, or narrow the command with grep, head, tail or sed -n ...]\n\n")


def cut_short(text: str, limit: int) -> str:
    """At most `limit` characters, with an ellipsis where it was cut: for names and values
    quoted inside a message."""
    if len(text) <= limit:
        return text
    return text[:limit - 1] + "…"
