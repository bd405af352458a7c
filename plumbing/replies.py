"""What the API accepts in a history, and how a turn that failed leaves it valid.

The Messages API refuses a request in which a `tool_use` has no `tool_result` right after it, a
text block is blank, a message is empty, or a thinking block is not exactly as it came (its
signature proves it); these helpers keep every history the loop builds within those rules,
whatever stops a turn. How the API says a reply stopped early, and what to do about each:
https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons
"""

import anthropic

from plumbing.budget import make_room

INCOMPLETE_REPLY = ["max_tokens", "refusal", "model_context_window_exceeded"]  # stop reasons
INTERRUPTED = "interrupted by the user before this call finished"


class AgentStopped(Exception):
    """The turn ended without a finished answer: the round cap, max_tokens, a full context."""


class Refused(Exception):
    """The model declined (stop_reason "refusal"). The docs advise taking the refused exchange
    out of the conversation: kept, it invites more refusals. recover_from() does that."""


def blocks_to_keep(content: list) -> list:
    """The reply's blocks the API takes back: no blank text, and no thinking block that lost
    its signature to max_tokens (the signature comes last). Every other thinking block is kept
    exactly as it came: the API checks its signature, and the model needs its own notes."""
    kept = []
    for block in content:
        if block.type == "text" and not block.text.strip():
            continue
        if block.type == "thinking" and not block.signature:
            continue
        kept.append(block)
    return kept


def reply_text(response: anthropic.types.Message) -> str:
    texts = [block.text for block in response.content if block.type == "text"]
    return "".join(texts)


def error_result(tool_use_id: str, message: str) -> dict:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": failed(message),
            "is_error": True}


def failed(text: str) -> str:
    """A failed call's result says so in its own words too: some endpoints drop is_error on the
    way to the model (LiteLLM's OpenAI-format route; DeepSeek ignores it)."""
    if text.startswith(FAILED):
        return text
    return FAILED + text


FAILED = "error: "


def not_run_results(calls: list, why: str) -> list:
    """An error result for each call that was not run: every tool_use needs its tool_result."""
    return [error_result(call.id, why) for call in calls]


def final_answer(response: anthropic.types.Message, messages: list) -> str:
    """The reply's text. An empty reply right after tool results is no answer: the user is told,
    rather than the turn ending in silence as if it had succeeded."""
    text = reply_text(response)
    if not text.strip() and tool_results_were_last(messages):
        raise AgentStopped("the model ended its turn with an empty reply after the tool results")
    return text


def tool_results_were_last(messages: list) -> bool:
    """Whether the last user message holds tool results: the model was answering them."""
    for message in reversed(messages):
        if message["role"] == "user":
            return any(is_tool_result(block) for block in message["content"])
    return False


def is_tool_result(block) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


STOPPED_EARLY = {  # stop reason: what the user reads
    "max_tokens": "the reply was cut short at max_tokens (MAX_TOKENS): what it says is "
                  "incomplete",
    "model_context_window_exceeded": "the conversation filled the model's context window",
}


def stop_incomplete_turn(messages: list, calls: list, stop_reason: str) -> None:
    """Answer the calls of a reply that was cut off, without running them; then stop the turn.
    A refusal raises Refused; a full context window also makes room for the next turn."""
    if stop_reason == "refusal":
        raise Refused("the model declined to go on with this request (refusal)")
    reason = STOPPED_EARLY.get(stop_reason, f"the reply stopped early ({stop_reason})")
    if calls:
        why = f"not run: the reply stopped early ({stop_reason}); it is incomplete"
        messages.append({"role": "user", "content": not_run_results(calls, why)})
    if stop_reason == "model_context_window_exceeded":
        reason += f"; {room_made(make_room(messages))}"
    raise AgentStopped(reason)


def room_made(replaced: int) -> str:
    """What make_room() did, for the user."""
    if replaced == 0:
        return "there is no tool result left to take out: start a new session"
    return f"the {replaced} oldest tool results were taken out of the history to make room"


def add_user_message(messages: list, text: str) -> None:
    """A new user message, or one more block in the last one if the history ends on ours."""
    block = {"type": "text", "text": text}
    if messages and messages[-1]["role"] == "user":  # a stopped turn ended on our side: join it
        messages[-1]["content"].append(block)
    else:
        messages.append({"role": "user", "content": [block]})


def copy_history(messages: list) -> list:
    """A copy deep enough to undo a turn: new lists of blocks, the blocks themselves shared."""
    return [{**message, "content": message["content"][:]} for message in messages]
