"""The page "Other models, and no key": what it shows of scripted/endpoints.py, made from the rows.

    --8<-- "endpoints/en/table.md"      one row per endpoint: what it takes, returns and refuses
    --8<-- "endpoints/en/sources.md"    the pages and source files each row follows
    --8<-- "endpoints/ollama.sh"        the settings for a local server, for bash and zsh
    --8<-- "endpoints/ollama.ps1"       ... and for PowerShell
    {{ endpoints.ollama.model }}        a value of a row, in the page's prose (numbers.json)

A fact is written once, in the row; the table says "unknown" where the row does (None).
"""

from scripted.endpoints import ENDPOINTS, THINKING, Endpoint

LOCAL = ["ollama", "llama.cpp"]  # the servers the page sets up, in its order
# Ollama's context for coding agents: "at least 64k tokens" (https://ollama.com/blog/claude, a
# source of the ollama row). OLLAMA_CONTEXT_LENGTH sets it for the server
# (https://docs.ollama.com/context-length).
OLLAMA_CONTEXT = 65_536

LABELS = {
    "en": {
        "columns": ["Endpoint", "Key header", "Refuses", "Ignores", "Thinking", "Usage",
                    "Errors", "max_tokens / context", "Tool ids", "is_error"],
        "unknown": "unknown",
        "none": "nothing",
        "bearer": "Authorization: Bearer",
        "usage_end": " (at the end only)",
        "usage_cache": "with cache counts",
        "usage_plain": "input and output",
        "yes": "reaches the model",
        "no": "dropped",
        "model_table": "the model's",
        "thinking": THINKING,
    },
    "ja": {
        "columns": ["エンドポイント", "キーのヘッダー", "拒否する", "無視する", "思考", "使用量",
                    "エラー", "max_tokens / コンテキスト", "ツール ID", "is_error"],
        "unknown": "不明",
        "none": "なし",
        "bearer": "Authorization: Bearer",
        "usage_end": "（最後にだけ）",
        "usage_cache": "キャッシュの数も",
        "usage_plain": "入力と出力",
        "yes": "モデルに届く",
        "no": "落とされる",
        "model_table": "モデルによる",
        "thinking": {
            "signed": "署名付き（そのまま返す）",
            "empty signature": "署名が空文字列",
            "no signature": "署名の欄がない",
            "random signature": "検証されないランダムな署名",
            "none": "返さない",
        },
    },
}


def endpoint_files() -> dict[str, str]:
    """Every file the page includes, by path under .generated/."""
    files = {}
    for language in LABELS:
        files[f"endpoints/{language}/table.md"] = table(language)
        files[f"endpoints/{language}/sources.md"] = sources()
    for endpoint in ENDPOINTS:
        if endpoint.name in LOCAL:
            files[f"endpoints/{endpoint.name}.sh"] = shell_lines(endpoint)
            files[f"endpoints/{endpoint.name}.ps1"] = powershell_lines(endpoint)
    return files


def endpoint_numbers() -> dict[str, str]:
    """The values the page's prose quotes, as {{ endpoints.NAME.FIELD }}."""
    numbers = {"endpoints.ollama.context": str(OLLAMA_CONTEXT)}
    for endpoint in ENDPOINTS:
        if endpoint.name in LOCAL:
            numbers[f"endpoints.{endpoint.name}.model"] = endpoint.model
            numbers[f"endpoints.{endpoint.name}.base_url"] = endpoint.base_url
            if endpoint.context_window:
                numbers[f"endpoints.{endpoint.name}.context"] = str(endpoint.context_window)
            for name, value in endpoint.settings.items():
                numbers[f"endpoints.{endpoint.name}.{name}"] = value
    return numbers


# -- the settings a learner types --


def learner_settings(endpoint: Endpoint) -> dict[str, str]:
    """The variables to set, in order: where, the key (a local server checks none), the model,
    and what the row adds (MAX_TOKENS within llama.cpp's context)."""
    return {
        "ANTHROPIC_BASE_URL": endpoint.base_url,
        "ANTHROPIC_AUTH_TOKEN": endpoint.name,  # any text will do: the server does not check it
        "ANTHROPIC_API_KEY": "",  # empty, so that a key for Claude is not sent there instead
        "MODEL_ID": endpoint.model,
        **endpoint.settings,
    }


def shell_lines(endpoint: Endpoint) -> str:
    return "".join(f"export {name}={value}\n" for name, value in learner_settings(endpoint).items())


def powershell_lines(endpoint: Endpoint) -> str:
    return "".join(f'$env:{name} = "{value}"\n'
                   for name, value in learner_settings(endpoint).items())


# -- the table --


def table(language: str) -> str:
    labels = LABELS[language]
    lines = ["| " + " | ".join(labels["columns"]) + " |",
             "|" + " --- |" * len(labels["columns"])]
    for endpoint in ENDPOINTS:
        cells = [endpoint.title, key_header(endpoint, labels), refuses(endpoint, labels),
                 ignores(endpoint, labels), thinking(endpoint, labels), usage(endpoint, labels),
                 known(endpoint.error_shape, labels), limits(endpoint, labels),
                 code(endpoint.tool_id_prefix, "…", labels), is_error(endpoint, labels)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def key_header(endpoint: Endpoint, labels: dict) -> str:
    if endpoint.auth is None:
        return labels["unknown"]
    names = {"x-api-key": "x-api-key", "bearer": labels["bearer"]}
    return ", ".join(f"`{names[header]}`" for header in endpoint.auth)


def refuses(endpoint: Endpoint, labels: dict) -> str:
    return ", ".join(f"`{field}`" for field in endpoint.rejects) or labels["none"]


def ignores(endpoint: Endpoint, labels: dict) -> str:
    return ", ".join(f"`{field}`" for field in endpoint.ignores) or labels["none"]


def thinking(endpoint: Endpoint, labels: dict) -> str:
    if endpoint.thinking is None:
        return labels["unknown"]
    return labels["thinking"][endpoint.thinking]


def usage(endpoint: Endpoint, labels: dict) -> str:
    if endpoint.usage is None:
        return labels["unknown"]
    said = labels["usage_plain"]
    if "cache_read_input_tokens" in endpoint.usage:
        said = labels["usage_cache"]
    if endpoint.usage_at_start is False:
        said += labels["usage_end"]
    return said


def limits(endpoint: Endpoint, labels: dict) -> str:
    if endpoint.model == "":
        return labels["model_table"]
    output = f"{endpoint.max_output:,}" if endpoint.max_output else labels["unknown"]
    window = f"{endpoint.context_window:,}" if endpoint.context_window else labels["unknown"]
    return f"{output} / {window}"


def is_error(endpoint: Endpoint, labels: dict) -> str:
    if endpoint.is_error_survives is None:
        return labels["unknown"]
    return labels["yes"] if endpoint.is_error_survives else labels["no"]


def known(value: str | None, labels: dict) -> str:
    return labels["unknown"] if value is None else value


def code(value: str | None, after: str, labels: dict) -> str:
    return labels["unknown"] if value is None else f"`{value}{after}`"


# -- the sources --


def sources() -> str:
    """One line per row: its title, then each source, a link where it is an address."""
    lines = []
    for endpoint in ENDPOINTS:
        cited = [f"<{source}>" if source.startswith("https://") else source
                 for source in endpoint.sources]
        lines.append(f"- **{endpoint.title}**: " + "; ".join(cited))
    return "\n".join(lines) + "\n"
