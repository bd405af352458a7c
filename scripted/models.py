"""What the scripted server knows of each model: the figures and rules that differ by model.

Every current model of the SDK the requirements allow is here: each id of
`anthropic/types/model_param.py` that the SDK's DEPRECATED_MODELS does not list
(tests/test_server.py checks both ways). Each model names the pages its figures come from; a
field no page gives is named in its `unknown`, and the value played there is said beside it.
A model id that is not here is answered like the real API answers an unknown model: 404
not_found_error. The agent's own table (plumbing/model.py, MAX_OUTPUT) and the docs' model
tables (docsgen/numbers.py) are checked against, or generated from, this one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

# https://platform.claude.com/docs/en/about-claude/models/overview (context window, max output)
# https://platform.claude.com/docs/en/build-with-claude/prompt-caching#cache-limitations
#   (the minimum cacheable prompt length, per model)
# https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide (thinking on by default,
#   the accepted thinking types, the default display, no prefill, no forced tool choice)
# https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5#text-between-tool-calls
# The minimum cacheable prompt of each model, as the prompt caching page gave it after Opus 5
# (quoted in https://dev.to/creeta/claudes-prompt-cache-fails-silently-below-1024-tokens-1ch1 and
# in LiteLLM's https://docs.litellm.ai/docs/completion/prompt_caching): 512 for Opus 5, Fable 5
# and Mythos 5; 1,024 for Opus 4.8, Sonnet 5 and Sonnet 4.6; 2,048 for Opus 4.7; 4,096 for
# Opus 4.6 and Haiku 4.5. For a model no page gives, the server caches from 512 tokens, the
# smallest minimum of any model.
OVERVIEW = "https://platform.claude.com/docs/en/about-claude/models/overview"
CACHING = "https://platform.claude.com/docs/en/build-with-claude/prompt-caching"
UNKNOWN_CACHE_MINIMUM = 512
# The fields that are a model's rules rather than its size: for a model whose pages give only its
# size, all of them are unknown.
RULES = ("thinking_types", "default_display", "notes_in_thinking", "prefill", "forced_tool_choice")


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
    status: str = "current"  # "legacy": still served, its page advises a newer model
    sources: tuple[str, ...] = ()  # the pages the fields follow
    unknown: tuple[str, ...] = ()  # fields no page gives; the value is the one played


# -- the 5.5 generation: thinking always on, forced tool use refused --

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
    sources=(
        "https://platform.claude.com/docs/en/models/sonnet-5-5/overview",
        "https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide",
        CACHING,
    ),
)
# Its page lists the same breaking changes as Sonnet 5.5's (thinking cannot be turned off,
# forced tool use is an error, the text between tool calls comes back in thinking blocks,
# empty under the default display); it says nothing of between_tools or of prefill.
OPUS_5_5 = replace(
    SONNET_5_5,
    cache_minimum=UNKNOWN_CACHE_MINIMUM,
    thinking_types=("adaptive",),
    prefill=True,
    sources=("https://platform.claude.com/docs/en/models/opus-5-5/overview",),
    unknown=("cache_minimum", "prefill"),
)
# Fable 5.1 shares Opus 5.5's first three breaking changes (thinking cannot be turned off,
# forced tool use is an error, thinking blocks are tied to the model and the conversation).
FABLE_5_1 = replace(
    OPUS_5_5,
    default_display="summarized",
    notes_in_thinking=False,
    sources=(
        "https://platform.claude.com/docs/en/models/fable-5-1/overview",
        "https://platform.claude.com/docs/en/models/opus-5-5/overview",
    ),
    unknown=("status", "cache_minimum", "default_display", "notes_in_thinking", "prefill"),
)
# Fable 5.2 and Mythos 5.2 are one model with different safeguards (the Bedrock model card);
# their pages give no rule that differs from Fable 5.1's.
FABLE_5_2 = replace(
    FABLE_5_1,
    sources=(
        "https://platform.claude.com/docs/en/models/fable-5-2/migration-guide",
        "https://docs.aws.amazon.com/bedrock/latest/userguide/"
        "model-card-anthropic-claude-mythos-5-2.md",
    ),
    unknown=(
        "cache_minimum",
        "default_display",
        "notes_in_thinking",
        "prefill",
        "forced_tool_choice",
    ),
)
# No page of Mythos 5.1 was found; it is played as Fable 5.1, as Mythos 5.2 is Fable 5.2.
MYTHOS_5_1 = replace(
    FABLE_5_1,
    unknown=("status", "context_window", "max_output", "cache_minimum", *RULES),
)

# -- the 5 generation (legacy): thinking on by default --

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
    status="legacy",
    sources=(OVERVIEW, CACHING),
)
# Haiku 5.5: its pages give its size and adaptive thinking (effort medium by default); for the
# rest of its rules it is played as Sonnet 5.
HAIKU_5_5 = replace(
    SONNET_5,
    cache_minimum=UNKNOWN_CACHE_MINIMUM,
    status="current",
    sources=(OVERVIEW, "https://platform.claude.com/docs/en/models/opus-5/overview"),
    unknown=("cache_minimum", *RULES),
)
# Opus 5: as Sonnet 5, with the smaller cache minimum. Thinking is on by default, and it can be
# turned off only at effort high or lower.
OPUS_5 = replace(
    SONNET_5,
    cache_minimum=512,
    sources=("https://platform.claude.com/docs/en/models/opus-5/overview", CACHING),
    unknown=("forced_tool_choice",),
)
# Fable 5 and Mythos 5 share their specifications; adaptive thinking is always on.
FABLE_5 = replace(
    OPUS_5,
    thinking_types=("adaptive",),
    sources=(
        "https://platform.claude.com/docs/en/models/fable-5/overview",
        "https://platform.claude.com/docs/en/models/fable-5/"
        "introducing-claude-fable-5-and-claude-mythos-5",
        CACHING,
    ),
    unknown=("forced_tool_choice", "prefill"),
)

# -- the 4.x generation (legacy): thinking off unless asked for --

# Opus 4.7 takes adaptive thinking only: `enabled` with budget_tokens is a 400.
OPUS_4_7 = Model(
    context_window=1_000_000,
    max_output=128_000,
    cache_minimum=2_048,
    thinking_by_default=False,
    thinking_types=("adaptive", "disabled"),
    default_display="summarized",
    notes_in_thinking=False,
    prefill=True,
    forced_tool_choice=True,
    status="legacy",
    sources=(
        "https://docs.aws.amazon.com/bedrock/latest/userguide/"
        "model-card-anthropic-claude-opus-4-7.md",
        "https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/partner-models/"
        "claude/opus-4-7",
        CACHING,
    ),
    unknown=("status",),  # the Opus pages before and after it say legacy; no page of its own
)
OPUS_4_8 = replace(
    OPUS_4_7,
    cache_minimum=1_024,
    sources=("https://platform.claude.com/docs/en/models/opus-4-8/overview", CACHING),
    unknown=(),
)
# Opus 4.6 and Sonnet 4.6 also take `enabled` thinking with a budget.
OPUS_4_6 = replace(
    OPUS_4_7,
    cache_minimum=4_096,
    thinking_types=("adaptive", "enabled", "disabled"),
    sources=("https://platform.claude.com/docs/en/models/opus-4-6/overview", CACHING),
    unknown=(),
)
SONNET_4_6 = replace(
    OPUS_4_6,
    cache_minimum=1_024,
    sources=("https://platform.claude.com/docs/en/models/sonnet-4-6/overview", CACHING),
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
    sources=("https://platform.claude.com/docs/en/models/opus-5/overview", CACHING),
)
MODELS = {
    "claude-fable-5-2": FABLE_5_2,
    "claude-mythos-5-2": FABLE_5_2,
    "claude-haiku-5-5": HAIKU_5_5,
    "claude-sonnet-5-5": SONNET_5_5,
    "claude-fable-5-1": FABLE_5_1,
    "claude-opus-5-5": OPUS_5_5,
    "claude-mythos-5-1": MYTHOS_5_1,
    "claude-sonnet-5": SONNET_5,
    "claude-fable-5": FABLE_5,
    "claude-mythos-5": FABLE_5,
    "claude-opus-5": OPUS_5,
    "claude-opus-4-8": OPUS_4_8,
    "claude-opus-4-7": OPUS_4_7,
    "claude-opus-4-6": OPUS_4_6,
    "claude-sonnet-4-6": SONNET_4_6,
    "claude-haiku-4-5": HAIKU_4_5,
    "claude-haiku-4-5-20251001": HAIKU_4_5,
}
