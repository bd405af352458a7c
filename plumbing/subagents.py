"""v3+: what the main agent reads when a subagent stops, and a report held to its budget."""

import anthropic

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
    last = texts[-1]
    return f"\nIts last message{report_cut_note(last, budget)}:\n{last[:budget]}"


def said(block) -> str:
    """What a block of a reply says: its text, or a thinking block's notes (on Sonnet 5.5 the
    notes between tool calls come in thinking blocks)."""
    if block.type == "text":
        return block.text
    if block.type == "thinking":
        return block.thinking
    return ""


def report_cut_note(report: str, budget: int) -> str:
    """" (its first N of M characters)" when the report is over its budget, else nothing."""
    if len(report) <= budget:
        return ""
    return f" (its first {budget:,} of {len(report):,} characters)"


def within_budget(report: str, budget: int) -> str:
    """A finished subagent's report, held to its budget like a failed one's last message."""
    if len(report) <= budget:
        return report
    return f"[the report{report_cut_note(report, budget)}]\n{report[:budget]}"
