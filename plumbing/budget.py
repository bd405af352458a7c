"""The context budget: one limit for every tool result, and a cut that says what was left out."""

from plumbing.platforms import Platform, this_platform

NOTE_ROOM = 400  # characters kept free for the note that says what was cut
# What narrows a command in the bash tool's shell: PowerShell has no grep, head, tail or sed.
NARROWING = {"PowerShell": "Select-String, or Select-Object -First, -Last or -Skip ..."}


def clip(text: str, budget: int, platform: Platform | None = None) -> str:
    """Keep the head and tail of a long result, and say what was cut and how to get the rest."""
    if len(text) <= budget:
        return text
    keep = max(budget - NOTE_ROOM, 0)
    head = text[:keep * 2 // 3]
    tail = text[len(text) - keep // 3:]
    return head + cut_note(text, head, tail, platform) + tail


def cut_note(text: str, head: str, tail: str, platform: Platform | None = None) -> str:
    cut = text[len(head):len(text) - len(tail)]
    narrowing = NARROWING.get((platform or this_platform()).shell.name,
                              "grep, head, tail or sed -n ...")
    return (f"\n\n[... {len(cut):,} of {len(text):,} characters ({cut.count(chr(10)):,} lines) "
            "cut here to fit the context budget. Ask for less at a time: read_file with offset "
            f"and limit, or narrow the command with {narrowing}]\n\n")


def cut_short(text: str, limit: int, mark: str = "…") -> str:
    """At most `limit` characters: `text` as it is, or its start and then `mark` where it was cut
    (an ellipsis, or a note that says how long it was). The one cut of every text held to a
    length: names and values quoted in a message, an error on the screen, a subagent's report."""
    if len(text) <= limit:
        return text
    return text[:limit - len(mark)] + mark


# -- a conversation too long for the context window --
ROOM_NOTE = ("[this tool result was taken out of the conversation to make room in the model's "
             "context window; run the tool again if you still need it]")


def make_room(messages: list) -> int:
    """Replace the older half of the tool results still in the history with ROOM_NOTE, so that
    the next request is smaller and can succeed. Returns how many were replaced."""
    places = []
    for message in messages:
        if message["role"] != "user" or not isinstance(message["content"], list):
            continue
        for index, block in enumerate(message["content"]):
            if is_full_tool_result(block):
                places.append((message, index))
    take = (len(places) + 1) // 2
    for message, index in places[:take]:
        block = message["content"][index]
        message["content"][index] = {**block, "content": ROOM_NOTE}  # a new block: undo copies
    return take


def tool_results_size(messages: list) -> int:
    """Characters of the tool results make_room() could still take out of the history."""
    size = 0
    for message in messages:
        if message["role"] != "user" or not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if is_full_tool_result(block):
                size += len(str(block.get("content", "")))
    return size


def is_full_tool_result(block) -> bool:
    if not isinstance(block, dict) or block.get("type") != "tool_result":
        return False
    return block.get("content") != ROOM_NOTE
