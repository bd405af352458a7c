"""What the API accepts in a history, and how a turn that failed leaves it valid.

The Messages API refuses a request in which a `tool_use` has no `tool_result` right after it, a
text block is blank, or a message is empty; these helpers keep every history the loop builds
within those rules, whatever stops a turn.
"""

import anthropic

INCOMPLETE_REPLY = ["max_tokens", "refusal", "model_context_window_exceeded"]  # stop reasons
INTERRUPTED = "interrupted by the user before this call finished"


class AgentStopped(Exception):
    """The turn ended without a finished answer: the round cap, max_tokens, or a refusal."""


def without_blank_text(content: list) -> list:
    """The reply's blocks without empty text blocks, which the API refuses in a request."""
    return [block for block in content if block.type != "text" or block.text.strip()]


def reply_text(response: anthropic.types.Message) -> str:
    texts = [block.text for block in response.content if block.type == "text"]
    return "".join(texts)


def error_result(tool_use_id: str, message: str) -> dict:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": message,
            "is_error": True}


def not_run_results(calls: list, why: str) -> list:
    """An error result for each call that was not run: every tool_use needs its tool_result."""
    return [error_result(call.id, why) for call in calls]


def stop_incomplete_turn(messages: list, calls: list, stop_reason: str) -> None:
    """Answer the calls of a reply that was cut off, without running them; then stop the turn."""
    reason = f"the reply stopped early ({stop_reason}); it is incomplete"
    if calls:
        messages.append({"role": "user", "content": not_run_results(calls, f"not run: {reason}")})
    raise AgentStopped(reason)


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
