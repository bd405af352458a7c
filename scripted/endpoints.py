"""The endpoints a learner can point the scripts at, as data: one row per family.

Each row says how one Messages-API endpoint answers, as its own documentation or source says,
and the scripted server plays it (`python -m scripted.server --endpoint ollama`, or the key
`endpoint: ollama` in a scenario). The docs page "Other models, and no key" renders its table
from these rows, so a fact is written once, here, next to the page or file it comes from.

    field              what it says                                       None means
    name               the key for --endpoint and `endpoint:`
    title              what the docs call it
    sources            the pages or source files the row follows
    base_url           ANTHROPIC_BASE_URL for it (an example)
    model              a model id it serves ("" : the model table in scripted/models.py)
    auth               the headers its page shows carrying the key:          unknown: the
                       "x-api-key", "bearer" (a request with only another    server takes
                       one is refused)                                       either
    key_checked        a wrong key is refused (False: no key is checked)     unknown
    rejects            request field -> the 400 message it answers with
    ignores            request fields it accepts and drops without a word
                       (thinking.budget_tokens is not played: see as_seen_by)
    thinking           the thinking blocks it returns (see THINKING)         unknown
    usage              the usage fields its replies carry                    unknown
    usage_at_start     message_start carries the input count (False: only   unknown
                       message_delta, at the end of the stream, has counts)
    stream_errors      an error can come as `event: error` in a 200 stream   unknown
    error_shape        "anthropic" {"type": "error", "error": {...}} or      unknown
                       "openai" {"error": {"message", "type", "code"}}
    max_output         the largest max_tokens it accepts                     unknown
    context_window     tokens of prompt and reply together                   unknown
    too_long           its 400 message for a request beyond the context      unknown
                       ({size} and {window} are filled in)
    tool_id_prefix     how the ids of its tool_use blocks begin              unknown
    is_error_survives  the model is told that a tool_result has is_error     unknown
    tool_choice        what it does with tool_choice {"type": "auto"}, which unknown (played
                       the scripts send with their tools: "passed" (on to   as the API: taken)
                       the model, or to the backend as its own field),
                       "ignored" (accepted, dropped)
    settings           what a learner sets besides the URL, key and model
                       (MAX_TOKENS within a local server's context size)

Request fields are named as the API names them: `cache_control` is the top-level (automatic)
one, `thinking.display` the display inside `thinking`, `tool_result.is_error` the flag on a
tool result. What no source we read says is None: unknown, not guessed. The server then plays
what the Messages API itself does, and the docs table says "unknown".
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

# What a reply's thinking blocks look like:
THINKING = {
    "signed": "thinking blocks with a signature that must come back unchanged",
    "empty signature": "thinking blocks whose signature is the empty string",
    "no signature": "thinking blocks without a signature field",
    "random signature": "thinking blocks signed with a random id that nothing checks",
    "none": "no thinking blocks",
}
ANTHROPIC_USAGE = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
PLAIN_USAGE = ("input_tokens", "output_tokens")
# A gateway in front of Bedrock or Vertex validates the request against that cloud's schema,
# which has no top-level cache_control.
EXTRA_INPUTS = "{field}: Extra inputs are not permitted"


@dataclass(frozen=True)
class Endpoint:
    name: str
    title: str
    sources: tuple[str, ...]
    base_url: str
    model: str
    auth: tuple[str, ...] | None = None
    key_checked: bool | None = None
    rejects: dict[str, str] = field(default_factory=dict)
    ignores: tuple[str, ...] = ()
    thinking: str | None = None
    usage: tuple[str, ...] | None = None
    usage_at_start: bool | None = None
    stream_errors: bool | None = None
    error_shape: str | None = None
    max_output: int | None = None
    context_window: int | None = None
    too_long: str | None = None
    tool_id_prefix: str | None = None
    is_error_survives: bool | None = None
    tool_choice: str | None = None
    settings: dict[str, str] = field(default_factory=dict)
    notes: str = ""


# Claude's own API: what the gateways in front of it pass on, and the other rows differ from.
ANTHROPIC = Endpoint(
    name="anthropic",
    title="Claude API (Anthropic)",
    sources=(
        "https://platform.claude.com/docs/en/api/messages",
        "https://platform.claude.com/docs/en/api/errors",
        "https://platform.claude.com/docs/en/build-with-claude/streaming",
        "scripted/models.py (each model's figures and thinking rules, with their pages)",
    ),
    base_url="https://api.anthropic.com",
    model="",
    auth=("x-api-key", "bearer"),
    key_checked=True,
    thinking="signed",
    usage=ANTHROPIC_USAGE,
    usage_at_start=True,
    stream_errors=True,
    error_shape="anthropic",
    tool_id_prefix="toolu_",
    is_error_survives=True,
    tool_choice="passed",
    notes="max_output and context_window are the model's: see the model table.",
)
ENDPOINTS = [
    ANTHROPIC,
    replace(
        ANTHROPIC,
        name="cloud-gateway",
        title="A Messages-API gateway in front of Amazon Bedrock or Google Vertex AI",
        sources=(
            "shared/README.md, Messages API facts (checked 2026-11-24): endpoints in front of "
            "Bedrock or Vertex answer 400 `cache_control: Extra inputs are not permitted`",
            "https://platform.claude.com/docs/en/build-with-claude/prompt-caching",
        ),
        base_url="https://gateway.example",
        rejects={"cache_control": EXTRA_INPUTS.format(field="cache_control")},
        notes="Claude models behind another cloud: the same replies, without automatic caching.",
    ),
    Endpoint(
        name="ollama",
        title="Ollama (v0.14 and later), local",
        sources=(
            "https://docs.ollama.com/api/anthropic-compatibility",
            "https://ollama.com/blog/claude",
        ),
        base_url="http://localhost:11434",
        model="qwen3-coder",
        auth=("x-api-key", "bearer"),
        key_checked=False,
        ignores=("cache_control", "tool_choice", "metadata"),
        tool_choice="ignored",
        # the page sets a 65,536-token context (docsgen/endpoints.py): the default MAX_TOKENS of
        # 64,000 would leave 1,536 tokens for the prompt
        settings={"MAX_TOKENS": "16384"},
        thinking="no signature",
        usage=PLAIN_USAGE,
        stream_errors=False,
        notes=(
            "ANTHROPIC_AUTH_TOKEN=ollama: a key is required by the SDK and ignored by the "
            "server. No count_tokens endpoint; a `system` role inside `messages` is a 400. "
            "The blog advises a context of at least 64K tokens for coding agents."
        ),
    ),
    Endpoint(
        name="llama.cpp",
        title="llama.cpp server (llama-server), local",
        sources=(
            "ggml-org/llama.cpp: tools/server/README.md (POST /v1/messages: its fields, "
            "`thinking` not among them; tools need --jinja; count_tokens served)",
            "ggml-org/llama.cpp: tools/server (exceed_context_size_error, as clients quote it)",
            "shared/README.md, endpoints (checked 2026-11-27 in tools/server; not re-read here): "
            'thinking blocks with signature "", errors in OpenAI\'s shape',
        ),
        base_url="http://localhost:8080",
        model="local-model",
        key_checked=False,
        thinking="empty signature",
        error_shape="openai",
        max_output=32_768,
        context_window=32_768,
        too_long=(
            "request ({size} tokens) exceeds the available context size ({window} tokens), "
            "try increasing it"
        ),
        settings={"MAX_TOKENS": "16384"},  # half the context: the prompt needs the rest
        notes=(
            "The context size is what the server was started with (--ctx-size); the row plays "
            "32K, and a max_tokens beyond it is refused. A key is checked only with --api-key."
        ),
    ),
    Endpoint(
        name="lm-studio",
        title="LM Studio, local",
        sources=(
            "https://lmstudio.ai/docs/developer/anthropic-compat",
            "https://lmstudio.ai/docs/integrations/claude-code",
        ),
        base_url="http://localhost:1234",
        model="openai/gpt-oss-20b",
        auth=("x-api-key", "bearer"),
        key_checked=False,
        notes=(
            "ANTHROPIC_AUTH_TOKEN=lmstudio; with Require Authentication on, both x-api-key and "
            "Authorization: Bearer carry the token. Its page advises more than about 25K "
            "tokens of context for coding agents. The rest is not documented."
        ),
    ),
    Endpoint(
        name="vllm",
        title="vLLM, self-hosted",
        sources=(
            "vllm-project/vllm: vllm/entrypoints/anthropic/protocol.py (the request schema, "
            "the error body)",
            "vllm-project/vllm: vllm/entrypoints/anthropic/serving_messages.py (tool results "
            "become `tool` messages of content only; usage in message_delta)",
            "vllm-project/vllm: vllm/entrypoints/anthropic/serving.py (the reasoning the "
            "server's --reasoning-parser finds becomes a thinking block signed uuid4().hex; "
            "a thinking block sent back becomes `reasoning`, unchecked)",
            "vllm-project/vllm: vllm/utils (random_tool_call_id: chatcmpl-tool-...)",
        ),
        base_url="http://localhost:8000",
        model="Qwen/Qwen3-Coder-30B-A3B-Instruct",
        key_checked=False,
        ignores=("thinking", "cache_control", "tool_result.is_error"),
        thinking="random signature",
        usage=PLAIN_USAGE,
        usage_at_start=False,
        stream_errors=True,
        error_shape="anthropic",
        tool_id_prefix="chatcmpl-tool-",
        is_error_survives=False,
        notes=(
            "`thinking` is not in its request schema (pydantic drops unknown fields): a model "
            "reasons when the server was started with --reasoning-parser, whatever the "
            "request says, and newer versions return the reasoning as thinking blocks signed "
            "with a random id. Its "
            "message_start may carry the input count beside the message instead of inside "
            "it; the row plays zeros there. A key is checked only with --api-key."
        ),
    ),
    replace(
        ANTHROPIC,
        name="litellm",
        title="LiteLLM proxy, native anthropic/ route",
        sources=(
            "litellm 1.108.7 (pip install 'litellm[proxy]'), run by tests/test_litellm.py in "
            "front of this server",
            "https://docs.litellm.ai/docs/anthropic_unified",
        ),
        base_url="http://localhost:4000",
        model="claude-sonnet-5-5",
        notes=(
            "The key is LITELLM_MASTER_KEY. The request reaches the server as it was sent: "
            "thinking with its display, the top-level cache_control; signatures and cache "
            "counts come back unchanged (seen in tests/test_litellm.py). Reported, not seen "
            "here: adaptive thinking dropped for a model not marked supports_adaptive_thinking."
        ),
    ),
    Endpoint(
        name="litellm-openai",
        title="LiteLLM proxy, OpenAI-format route (a chat-completions backend)",
        sources=(
            "litellm 1.108.7: litellm/llms/anthropic/pass_through/adapters/ (the translation) "
            "and pass_through/messages/handler.py (use_chat_completions_url_...)",
            "litellm 1.108.7 run by tests/test_litellm.py in front of scripted/chat_completions.py",
        ),
        base_url="http://localhost:4000",
        model="gpt-4o-mini",
        auth=("x-api-key", "bearer"),
        key_checked=True,
        rejects={
            "thinking": (
                "litellm.UnsupportedParamsError: openai does not support parameters: "
                "['reasoning_effort'], for model={model}. To drop these, set "
                "`litellm.drop_params=True` or for proxy:\n\n`litellm_settings:\n "
                "drop_params: true`\n. \n If you want to use these params dynamically send "
                "allowed_openai_params=['reasoning_effort'] in your request.\n\nLiteLLM: model "
                "group '{model}' failed with the error above. No fallback was attempted."
            )
        },
        ignores=("cache_control", "tool_result.is_error"),
        thinking="none",
        usage=PLAIN_USAGE,
        usage_at_start=False,
        error_shape="anthropic",
        tool_id_prefix="call_",
        is_error_survives=False,
        tool_choice="passed",
        notes=(
            "`thinking` becomes reasoning_effort, which a model without reasoning refuses "
            "unless drop_params is set. Calls /v1/responses unless litellm_settings has "
            "use_chat_completions_url_for_anthropic_messages: true. Tool ids are the backend's "
            "(call_...). message_start counts zero, cache counts included; message_delta "
            "has the input and output counts. The top-level cache_control is passed on to the "
            "backend as a field of the chat request."
        ),
    ),
    Endpoint(
        name="openrouter",
        title="OpenRouter",
        sources=(
            "OpenRouter's Claude Code guide, as quoted at "
            "https://www.developersdigest.tech/setup/openrouter/claude-code",
        ),
        base_url="https://openrouter.ai/api",
        model="anthropic/claude-sonnet-5.5",
        auth=("bearer",),
        key_checked=True,
        notes=(
            "The key goes in ANTHROPIC_AUTH_TOKEN (Authorization: Bearer) and ANTHROPIC_API_KEY "
            "must be empty: x-api-key is not its header."
        ),
    ),
    Endpoint(
        name="deepseek",
        title="DeepSeek",
        sources=("https://api-docs.deepseek.com/guides/anthropic_api",),
        base_url="https://api.deepseek.com/anthropic",
        model="deepseek-v4-pro",
        key_checked=True,
        # thinking.budget_tokens: for the docs table only, not played (server.as_seen_by)
        ignores=("thinking.budget_tokens", "tool_result.is_error"),
        is_error_survives=False,
        notes=(
            "claude-opus* ids are served by deepseek-v4-pro, other claude* ids by "
            "deepseek-flash; other unknown ids are a 400."
        ),
    ),
    Endpoint(
        name="kimi",
        title="Kimi (Moonshot AI)",
        sources=(
            "https://www.developersdigest.tech/reference/api-compatibility/moonshot",
            "rig-core 0.42: src/providers/moonshot.rs (ANTHROPIC_API_BASE_URL)",
        ),
        base_url="https://api.moonshot.ai/anthropic",
        model="kimi-k2.5",
        notes="Its docs list no limits of the Anthropic-compatible layer.",
    ),
    Endpoint(
        name="glm",
        title="GLM (Zhipu AI / Z.ai)",
        sources=(
            "rig-core 0.36: providers::zai (ANTHROPIC_API_BASE_URL)",
            "Agents365-ai/dsclaude: glmclaude (the international and China base URLs)",
        ),
        base_url="https://api.z.ai/api/anthropic",
        model="glm-4.7",
        notes="No page of the vendor's own was found; only its base URL is known.",
    ),
    Endpoint(
        name="minimax",
        title="MiniMax",
        sources=("https://platform.minimax.io/docs/api-reference/text-anthropic-api",),
        base_url="https://api.minimax.io/anthropic",
        model="MiniMax-M3",
        auth=("x-api-key", "bearer"),
        key_checked=True,
        thinking="signed",
        context_window=204_800,
        notes=(
            "Text and tool calls only (no images or documents). The whole reply, thinking "
            "blocks included, must come back in the history."
        ),
    ),
    Endpoint(
        name="qwen",
        title="Qwen (Alibaba Cloud Model Studio)",
        sources=(
            "https://www.alibabacloud.com/help/en/model-studio/anthropic-api-messages",
            "https://www.alibabacloud.com/help/en/model-studio/claude-code",
        ),
        base_url="https://dashscope-intl.aliyuncs.com/apps/anthropic",
        model="qwen3-coder-plus",
        auth=("x-api-key", "bearer"),
        key_checked=True,
        notes=(
            "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN carries the key. Thinking only on some "
            "models (the Qwen-Coder models have none); the example sends enabled thinking with "
            "budget_tokens."
        ),
    ),
]
BY_NAME = {endpoint.name: endpoint for endpoint in ENDPOINTS}


def unknown_endpoint(name: str) -> str:
    """For --endpoint: one line that lists the names to choose from, or "" if `name` is a row."""
    if name in BY_NAME:
        return ""
    names = ", ".join(BY_NAME)
    return f"--endpoint {name!r} is not a row of scripted/endpoints.py; one of: {names}"
