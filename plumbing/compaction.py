"""v5: compaction's guards: a request's size, the summary request, and the fresh history.

    the history as it stands + one question   --> the summary request (the same prefix: cached)
    the summary + what must survive            --> a fresh history of one user message

The fresh history keeps no block of the old one, so no tool_use can lose its tool_result and no
thinking block is sent back changed: each old turn goes whole, its signed thinking with it, as the
thinking docs allow (https://platform.claude.com/docs/en/build-with-claude/thinking). The old
history is replaced only once the summary is there: a summary request that fails or is
interrupted leaves it exactly as it was.
"""

import anthropic

from plumbing.replies import add_user_message, copy_history, reply_text
from plumbing.screen import counted_far_below, input_counted
from plumbing.setup import bounded, explain_api_error

SUMMARY_TAG = "summary"  # the fresh history's first block: <summary>...</summary>


class CompactionFailed(Exception):
    """The summary request gave no summary; the history is kept as it was."""


def prompt_size(usage) -> int:
    """All the input a request sent, as its `usage` counts it: what it read from the cache, what
    it wrote to the cache, and the rest. `input_tokens` alone is only the rest.
    https://platform.claude.com/docs/en/build-with-claude/prompt-caching
    An endpoint that counted far less than the request held, or sent no count (a gateway's
    partial count: LiteLLM's OpenAI-format route said 15 for a 168-token prompt), would never
    let the history reach the threshold: there the size of the request itself is taken, about
    four characters a token, as the usage line says (plumbing/screen.py)."""
    if counted_far_below(usage):
        return usage.sent_estimate
    return input_counted(usage)


def with_question(messages: list, question: str) -> list:
    """A copy of the history with one question after its last message. Everything before the
    question is the prefix the last request sent, so the summary request reads it from the
    cache instead of paying for it again. The history itself is not touched."""
    request = copy_history(messages)
    add_user_message(request, question)
    return request


# Why a reply is no summary, by its stop_reason: only a text that ended normally is one. A text
# cut at max_tokens may have lost its last facts; a refusal's text is not about the work.
NO_SUMMARY = {
    "max_tokens": "the summary was cut off at max_tokens (MAX_TOKENS), so it may have lost facts",
    "refusal": "the model declined to write a summary (refusal)",
    "tool_use": "the model asked for a tool instead of writing a summary",
    "pause_turn": "the model paused before it wrote the summary (pause_turn)",
    "model_context_window_exceeded": "the summary request filled the model's context window",
}


def summary_of(response: anthropic.types.Message) -> str:
    """The summary the reply wrote. A reply that stops early, is refused, asks for a tool or has
    no text is no summary: CompactionFailed says which."""
    summary = reply_text(response).strip()
    if response.stop_reason != "end_turn":
        why = NO_SUMMARY.get(response.stop_reason)
        raise CompactionFailed(why or f"the reply stopped early ({response.stop_reason})")
    if not summary:
        raise CompactionFailed("the model's reply held no summary text")
    return summary


def fresh_history(summary: str, survivors: str) -> list:
    """The history to go on from: one user message, the summary first, then what must survive
    it word for word (the user's latest request among them). A conversation must end on a user
    message for the model to answer it, and this one does."""
    blocks = [{"type": "text", "text": f"<{SUMMARY_TAG}>\n{summary}\n</{SUMMARY_TAG}>"}]
    if survivors.strip():
        blocks.append({"type": "text", "text": survivors})
    return [{"role": "user", "content": blocks}]


def note_once(names: list, name: str) -> None:
    """Add a name to a list the first time it comes: the list keeps the order of first use."""
    if name not in names:
        names.append(name)


def compaction_note(size_before: int, summary_response: anthropic.types.Message) -> str:
    """What the user reads once the history is replaced: how much went in, how much came out."""
    summary_tokens = summary_response.usage.output_tokens
    return (f"compacted: {size_before:,} tokens of history went in, a summary of "
            f"{summary_tokens:,} tokens came out; the conversation goes on from it")


def failure_note(exc: Exception) -> str:
    """One line for a summary request that failed: why, that nothing was lost, and when it is
    tried again: not in every round of this turn, each of which would pay for one more call."""
    why = str(exc)
    if isinstance(exc, anthropic.APIError):
        why = explain_api_error(exc)
    return (f"compaction failed: {bounded(why)}; the history is kept as it was, and the next "
            "turn tries again (or type /compact)")
