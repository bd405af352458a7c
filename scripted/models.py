"""What the scripted server knows of each model: the figures and rules that differ by model.

Each field follows an official page, named beside it. A model id that is not here is answered
like the real API answers an unknown model: 404 not_found_error.
"""

from __future__ import annotations

from dataclasses import dataclass

# https://platform.claude.com/docs/en/about-claude/models/overview (context window, max output)
# https://platform.claude.com/docs/en/build-with-claude/prompt-caching#cache-limitations
#   (the minimum cacheable prompt length, per model)
# https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide (thinking on by default,
#   the accepted thinking types, the default display, no prefill, no forced tool choice)
# https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5#text-between-tool-calls


@dataclass(frozen=True)
class Model:
    context_window: int  # tokens of input and output together
    max_output: int  # the largest max_tokens the model accepts
    cache_minimum: int  # a shorter prefix is not cached, and no error says so
    thinking_by_default: bool  # a request without `thinking` thinks (adaptive)
    thinking_types: tuple[str, ...]  # the `thinking.type` values it accepts
    default_display: str  # what `display` is when the request leaves it out
    notes_in_thinking: bool  # the text between tool calls comes back in thinking blocks
    prefill: bool  # a conversation may end on an assistant message, which the reply continues
    forced_tool_choice: bool  # tool_choice "any" or "tool" is accepted


SONNET_5_5 = Model(
    context_window=1_000_000,
    max_output=128_000,
    cache_minimum=512,
    thinking_by_default=True,
    thinking_types=("adaptive", "between_tools"),
    default_display="omitted",
    notes_in_thinking=True,
    prefill=False,
    forced_tool_choice=False,
)
SONNET_5 = Model(
    context_window=1_000_000,
    max_output=128_000,
    cache_minimum=1_024,
    thinking_by_default=True,
    thinking_types=("adaptive", "disabled"),
    default_display="summarized",
    notes_in_thinking=False,
    prefill=True,
    forced_tool_choice=True,
)
SONNET_4_6 = Model(
    context_window=1_000_000,
    max_output=64_000,
    cache_minimum=1_024,
    thinking_by_default=False,
    thinking_types=("adaptive", "enabled", "disabled"),
    default_display="summarized",
    notes_in_thinking=False,
    prefill=True,
    forced_tool_choice=True,
)
HAIKU_4_5 = Model(
    context_window=200_000,
    max_output=64_000,
    cache_minimum=4_096,
    thinking_by_default=False,
    thinking_types=("enabled", "disabled"),
    default_display="summarized",
    notes_in_thinking=False,
    prefill=True,
    forced_tool_choice=True,
)
MODELS = {
    "claude-sonnet-5-5": SONNET_5_5,
    "claude-sonnet-5": SONNET_5,
    "claude-sonnet-4-6": SONNET_4_6,
    "claude-haiku-4-5": HAIKU_4_5,
}
