"""v3+: what the main agent reads when a subagent stops, and a report held to its budget."""

import anthropic

from plumbing.budget import cut_short
from plumbing.checks import ToolError
from plumbing.setup import explain_api_error

def subagent_failed(agent_type: str, exc: Exception, messages: list, budget: int) -> ToolError:
    """The error the main agent reads: why the subagent stopped, what it last said, what next."""
    if isinstance(exc, anthropic.APIError):
        why = explain_api_error(exc)
    else:
        why = str(exc)
    return ToolError(f"the {agent_type} subagent stopped without a report: {why}."
                     f"{last_message(messages, budget)}\nTry again with a smaller task, or do it "
                     "yourself.")


def last_message(messages: list, budget: int) -> str:
    """The subagent's last text, so that a run that failed still hands back what it found."""
    texts = []
    for message in messages:
        if message["role"] == "assistant":
            texts += [said(block) for block in message["content"] if said(block).strip()]
    if not texts:
        return ""
    return f"\nIts last message:\n{within_budget(texts[-1], budget)}"


def said(block) -> str:
    """What a block of a reply says: its text, or a thinking block's notes (on Sonnet 5.5 the
    notes between tool calls come in thinking blocks)."""
    if block.type == "text":
        return block.text
    if block.type == "thinking":
        return block.thinking
    return ""


def within_budget(report: str, budget: int) -> str:
    """A report held to its budget (a failed subagent's last message too), saying where it was
    cut and how long it was."""
    return cut_short(report, budget, f"…\n[cut here: {len(report):,} characters in all]")
