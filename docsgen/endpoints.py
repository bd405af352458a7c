"""The page "Other models, and no key": what it shows of scripted/endpoints.py, made from the rows.

    --8<-- "endpoints/en/table.md"      one row per endpoint: what it takes, returns and refuses
    --8<-- "endpoints/en/sources.md"    the pages and source files each row follows
    --8<-- "endpoints/en/notes.md"      each row's notes for a learner (NOTES_JA: in Japanese)
    --8<-- "endpoints/en/recordings.md" what answered each recording the repository ships
    --8<-- "endpoints/en/real.md"       what each real session sent back, and the server's log
    --8<-- "endpoints/litellm.yaml"     LiteLLM's config for a local OpenAI-format server
    --8<-- "endpoints/ollama.service.ini"   Ollama's context, set for its Linux service
    --8<-- "endpoints/ollama.sh"        the settings for a local server, for bash and zsh
    --8<-- "endpoints/ollama.ps1"       ... and for PowerShell
    {{ endpoints.ollama.model }}        a value of a row, in the page's prose (numbers.json)

A fact is written once, in the row; the table says "unknown" where the row does (None).
"""

import json
from pathlib import Path

from scripted import ROOT
from scripted.endpoints import BY_NAME, ENDPOINTS, THINKING, Endpoint
from scripted.live_local import CONTEXT, MASTER_KEY, MAX_TOKENS, MODEL_ALIAS, litellm_config

LOCAL = ["ollama", "llama.cpp"]  # the servers the page sets up, in its order
# Ollama's context for coding agents: "at least 64k tokens" (https://ollama.com/blog/claude, a
# source of the ollama row). OLLAMA_CONTEXT_LENGTH sets it for the server
# (https://docs.ollama.com/context-length).
OLLAMA_CONTEXT = 65_536
# qwen3-coder's download (its default tag, 30b): about 19 GB, as ollama.com/library/qwen3-coder
# lists it (issue 39; not re-read here); Ollama's Anthropic-compatibility page says it "is a 30B
# parameter model requiring at least 24GB of VRAM to run smoothly".
OLLAMA_DOWNLOAD_GB = 19
OLLAMA_VRAM_GB = 24
# LiteLLM in front of an OpenAI-format server on this machine: the ports the docs use
# (llama-cpp-python's server listens on 8000 by default, LiteLLM's proxy on 4000).
LITELLM_BACKEND = "http://localhost:8000/v1"
LITELLM_URL = "http://localhost:4000"
RECORDINGS = ROOT / "tests" / "recordings"

LABELS = {
    "en": {
        "columns": ["Endpoint", "Key header", "Refuses", "Ignores", "Thinking", "Usage",
                    "Errors", "max_tokens / context", "Tool ids", "is_error", "tool_choice"],
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
        "tool_choice": {"passed": "passed on", "ignored": "ignored"},
        "scripted": "a scripted model ({scenario}): no real model answered",
        "recorded": "recorded from {model} ({upstream}) on {date}",
    },
    "ja": {
        "columns": ["エンドポイント", "キーのヘッダー", "拒否する", "無視する", "思考", "使用量",
                    "エラー", "max_tokens / コンテキスト", "ツール ID", "is_error", "tool_choice"],
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
        "tool_choice": {"passed": "渡される", "ignored": "無視される"},
        "scripted": "台本どおりに答えるモデル（{scenario}）。本物のモデルは答えていない",
        "recorded": "{date} に {model}（{upstream}）から記録",
    },
}
# Each row's notes in Japanese, by row name: a row whose notes change needs its translation here
# too (tests/test_other_models.py checks that every row with notes has one, and no other).
NOTES_JA = {
    "anthropic": "max_output と context_window はモデルによります。モデルの表を参照してください。",
    "cloud-gateway": ("別のクラウドを通した Claude のモデルです。応答は同じで、自動キャッシュが"
                      "ありません。"),
    "ollama": (
        "ANTHROPIC_AUTH_TOKEN=ollama。SDK にはキーが必要ですが、サーバーは確かめません。"
        "count_tokens のエンドポイントはありません。`messages` の中の `system` ロールは 400 "
        "になります。コーディングエージェントには 64K トークン以上のコンテキストを勧めると、"
        "ブログに書かれています。"
    ),
    "llama.cpp": (
        "コンテキストの大きさは、サーバーを起動したときの値（--ctx-size）です。この行は 32K "
        "として振る舞い、それを超える max_tokens は拒否されます。キーを確かめるのは --api-key "
        "を付けたときだけです。"
    ),
    "lm-studio": (
        "ANTHROPIC_AUTH_TOKEN=lmstudio。Require Authentication をオンにすると、x-api-key と "
        "Authorization: Bearer のどちらでもトークンを送れます。コーディングエージェントには"
        "約 25K トークンより大きなコンテキストを勧めています。ほかは文書化されていません。"
    ),
    "vllm": (
        "`thinking` はリクエストのスキーマにありません（pydantic が知らないフィールドを捨てます）。"
        "モデルが推論するのはサーバーを --reasoning-parser 付きで起動したときで、リクエストの"
        "内容によりません。新しいバージョンは推論を思考ブロックとして返し、ランダムな ID で"
        "署名します。message_start の入力トークン数がメッセージの中ではなく横に置かれることが"
        "あり、この行はそこを 0 として振る舞います。キーを確かめるのは --api-key を付けたとき"
        "だけです。"
    ),
    "litellm": (
        "キーは LITELLM_MASTER_KEY です。リクエストは送ったままサーバーに届きます（表示の指定"
        "を含む thinking、最上位の cache_control）。署名とキャッシュの数もそのまま返ります"
        "（tests/test_litellm.py で確かめています）。報告はあるがここでは確かめていないこと: "
        "supports_adaptive_thinking の印がないモデルでは adaptive thinking が落とされます。"
    ),
    "litellm-openai": (
        "`thinking` は reasoning_effort に変わり、推論のないモデルは drop_params を設定しない"
        "かぎりそれを拒否します。litellm_settings に "
        "use_chat_completions_url_for_anthropic_messages: true がないと /v1/responses を呼び"
        "ます。ツール ID はバックエンドのもの（call_...）です。message_start の数はキャッシュ"
        "の数も含めて 0 で、入力と出力の数は message_delta にあります。最上位の cache_control "
        "はチャットのリクエストのフィールドとしてバックエンドへ渡されます。"
    ),
    "openrouter": (
        "キーは ANTHROPIC_AUTH_TOKEN（Authorization: Bearer）に入れ、ANTHROPIC_API_KEY は空に"
        "します。x-api-key はこのサービスのヘッダーではありません。"
    ),
    "deepseek": (
        "claude-opus* の ID は deepseek-v4-pro が、ほかの claude* の ID は deepseek-flash が"
        "受け持ちます。ほかの知らない ID は 400 です。"
    ),
    "kimi": "ドキュメントには Anthropic 互換の層の上限が書かれていません。",
    "glm": "提供元自身のページは見つかっていません。わかっているのはベース URL だけです。",
    "minimax": (
        "テキストとツール呼び出しだけです（画像や文書はありません）。思考ブロックを含めて、"
        "応答全体を履歴に入れて返す必要があります。"
    ),
    "qwen": (
        "キーは ANTHROPIC_API_KEY でも ANTHROPIC_AUTH_TOKEN でも渡せます。思考があるのは一部"
        "のモデルだけです（Qwen-Coder のモデルにはありません）。例では budget_tokens 付きの"
        "enabled の thinking を送っています。"
    ),
}


def endpoint_files() -> dict[str, str]:
    """Every file the page includes, by path under .generated/."""
    files = {}
    for language in LABELS:
        files[f"endpoints/{language}/table.md"] = table(language)
        files[f"endpoints/{language}/sources.md"] = sources()
        files[f"endpoints/{language}/notes.md"] = notes(language)
        files[f"endpoints/{language}/recordings.md"] = recordings(language)
        files[f"endpoints/{language}/real.md"] = real_sessions(language)
    files["endpoints/litellm.yaml"] = litellm_config(LITELLM_BACKEND)
    files["endpoints/ollama.service.ini"] = (  # systemctl edit ollama.service: the override
        f'[Service]\nEnvironment="OLLAMA_CONTEXT_LENGTH={OLLAMA_CONTEXT}"\n')
    files["endpoints/litellm.sh"] = shell_lines(BY_NAME["litellm-openai"])
    files["endpoints/litellm.ps1"] = powershell_lines(BY_NAME["litellm-openai"])
    for endpoint in ENDPOINTS:
        if endpoint.name in LOCAL:
            files[f"endpoints/{endpoint.name}.sh"] = shell_lines(endpoint)
            files[f"endpoints/{endpoint.name}.ps1"] = powershell_lines(endpoint)
    return files


def endpoint_numbers() -> dict[str, str]:
    """The values the page's prose quotes, as {{ endpoints.NAME.FIELD }}."""
    numbers = {"endpoints.ollama.context": str(OLLAMA_CONTEXT),
               "endpoints.ollama.download_gb": str(OLLAMA_DOWNLOAD_GB),
               "endpoints.ollama.vram_gb": str(OLLAMA_VRAM_GB),
               "endpoints.litellm.url": LITELLM_URL,
               "endpoints.litellm.alias": MODEL_ALIAS,
               "endpoints.litellm.MAX_TOKENS": MAX_TOKENS,
               "endpoints.litellm.context": f"{CONTEXT:,}"}
    numbers.update(real_numbers())
    room = OLLAMA_CONTEXT - int(BY_NAME["ollama"].settings["MAX_TOKENS"])
    numbers["endpoints.ollama.prompt_room"] = f"{room:,}"
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
    and what the row adds (MAX_TOKENS within a local server's context). LiteLLM in front of a
    local OpenAI-format server: its master key, the model's alias in its config."""
    if endpoint.name == "litellm-openai":
        return {"ANTHROPIC_BASE_URL": LITELLM_URL, "ANTHROPIC_AUTH_TOKEN": MASTER_KEY,
                "ANTHROPIC_API_KEY": "", "MODEL_ID": MODEL_ALIAS, "MAX_TOKENS": MAX_TOKENS}
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
                 code(endpoint.tool_id_prefix, "…", labels), is_error(endpoint, labels),
                 tool_choice(endpoint, labels)]
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


def tool_choice(endpoint: Endpoint, labels: dict) -> str:
    if endpoint.tool_choice is None:
        return labels["unknown"]
    return labels["tool_choice"][endpoint.tool_choice]


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


# -- the notes, and the recordings --


def notes(language: str) -> str:
    """One line per row that has notes: its title, then what a learner needs to know."""
    lines = []
    for endpoint in ENDPOINTS:
        said = endpoint.notes if language == "en" else NOTES_JA.get(endpoint.name, "")
        if said:
            lines.append(f"- **{endpoint.title}**: {said}")
    return "\n".join(lines) + "\n"


def recordings(language: str) -> str:
    """Each recording the repository ships, and what answered it, read from its header: a
    scripted model (the demos) or a real server (tests/recordings/real/)."""
    labels = LABELS[language]
    lines = []
    for path in sorted(RECORDINGS.rglob("*.jsonl")):
        header = json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])
        upstream = header["upstream"]
        if upstream.startswith("scripted model"):
            said = labels["scripted"].format(scenario=upstream.removeprefix("scripted model ")
                                             .strip("()"))
        else:
            said = labels["recorded"].format(model=header["model"], upstream=upstream,
                                             date=header["date"])
        lines.append(f"- `{Path(path).relative_to(ROOT).as_posix()}`: {said}")
    return "\n".join(lines) + "\n"


REAL_LABELS = {
    "en": {"columns": ["Recording", "Script", "Server", "Route", "What came back",
                       "The server's log", "Exit code"],
           "litellm": "behind LiteLLM", "direct": "its own /v1/messages",
           "error": "HTTP {status}, {times} times", "empty": "HTTP 200, then an empty reply",
           "prose": "prose, no tool call", "tool": "a tool call",
           "stopped": ", stopped while it answered",
           "error_event": "HTTP 200, then an error event", "then": "; then "},
    "ja": {"columns": ["記録", "スクリプト", "サーバー", "経路", "返ってきたもの", "サーバーのログ",
                       "終了コード"],
           "litellm": "LiteLLM の後ろ", "direct": "サーバー自身の /v1/messages",
           "error": "HTTP {status} が {times} 回", "empty": "HTTP 200 のあと、空の応答",
           "prose": "文章だけ（ツール呼び出しなし）", "tool": "ツール呼び出し",
           "stopped": "（応答の途中で止めた）",
           "error_event": "HTTP 200 のあと、エラーのイベント", "then": "。そのあと "},
}


def real_sessions(language: str) -> str:
    """One row per recording of tests/recordings/real/: the script, what stood behind the
    gateway (its chat format), what came back, the error the server logged (which the gateway
    never sends on; scripted/live_local.py keeps it in the header), and the script's exit code."""
    labels = REAL_LABELS[language]
    rows = [labels["columns"], ["---"] * len(labels["columns"])]
    for path in sorted((RECORDINGS / "real").glob("*.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        header = lines[0]
        server = header["upstream"].split(" in front of ")[-1].split(" serving ")[0]
        if header["upstream"].endswith(", stopped while it answered"):
            server += labels["stopped"]
        route = labels["litellm" if " in front of " in header["upstream"] else "direct"]
        logged = "; ".join(f"`{line}`" for line in header.get("server_log", [])) or "-"
        rows.append([f"`{path.stem}`", header["script"], server, route,
                     came_back(lines, labels), logged, str(header["exit_code"])])
    return "\n".join("| " + " | ".join(row) + " |" for row in rows) + "\n"


def came_back(lines: list[dict], labels: dict) -> str:
    """What the gateway sent, in a few words: errors, an empty reply, prose, a tool call."""
    statuses = [line["status"] for line in lines if line["kind"] == "reply"]
    failed = [status for status in statuses if status != 200]
    events = [line["data"] for line in lines if line["kind"] == "event"]
    said = []
    if any(event["type"] == "error" for event in events):
        said.append(labels["error_event"])
    if failed:
        said.append(labels["error"].format(status=failed[0], times=len(failed)))
    if said:
        return labels["then"].join(said)
    blocks = [event["content_block"]["type"] for event in events
              if event["type"] == "content_block_start"]
    if "tool_use" in blocks:
        return labels["tool"]
    said = "".join(event["delta"].get("text", "") for event in events
                   if event["type"] == "content_block_delta")
    return labels["prose"] if said.strip() else labels["empty"]


def real_numbers() -> dict[str, str]:
    """What the page quotes of the real stack's v1 recording: about how many tokens the request
    held (counted as plumbing/model.py counts them) and how many the server said it read."""
    from plumbing.model import CHARACTERS_PER_TOKEN

    lines = [json.loads(line) for line in (RECORDINGS / "real" / "v1_litellm_llama_server.jsonl")
             .read_text(encoding="utf-8").splitlines()]
    request = next(line["body"] for line in lines if line["kind"] == "request")
    prompt = {name: request.get(name) for name in ("system", "tools", "messages")}
    sent = len(json.dumps(prompt, ensure_ascii=False)) // CHARACTERS_PER_TOKEN
    counted = 0
    for line in lines:
        if line["kind"] == "event" and line["data"]["type"] == "message_delta":
            usage = line["data"]["usage"]
            counted = sum(usage.get(name) or 0 for name in (
                "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    return {"real.v1_sent": f"{sent:,}", "real.v1_counted": f"{counted:,}"}
