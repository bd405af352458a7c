""" "Under the hood": every model call of a version's offline demo, as the scripted server got it.

`python -m scripted.demo vN --record F` saves each request the script sent (its raw body, its size
in bytes, the track of the scenario that answered it) and the reply. The build runs the demos
that way once, for the transcripts and for this, and turns each recording into one HTML fragment
per language, which the chapter includes:

    --8<-- "hood/en/v3.html"

A chapter may show its first calls early and the others further down the same page, from the run
split in two: `hood/en/v1-first.html` holds the main agent's first FIRST_CALLS calls, and
`hood/en/v1-rest.html` the chart and the other calls, whose pointers reach back into the first.

One <details> per model call, in order: the request (system, tools, messages, the other fields) as
JSON, the reply's content blocks, its stop_reason and usage, and the request's size. Nothing needs
JavaScript. A subagent's calls sit inside the call of the main agent whose `Task` started them.

A request repeats what the one before it sent, so the page shows each part in full once: a later
request that sends the same system prompt, the same tools or the same message again shows a line
that points back to where it was shown ("unchanged since call 1"). So the page grows with the
conversation, not with its square, and what is new in each round stands out.

The same pages can show a session recorded from Claude with `python -m scripted.record`
(`from_session()`); a line at the top of each says where the requests were answered: by the
scripted model of a demo, or by which model on which day.

Who sent a request is read from the recording, never guessed from the order: the server records
the track that answered (`default` for the main agent, a track's `match` for a subagent), and a
subagent's calls go under the `Task` call whose prompt is their first message. Subagents run side
by side, so their requests interleave.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from docsgen.charts import PAIR, Bar, bar_chart
from scripted import replay
from scripted.rules import plain_text

MAIN_TRACK = "default"
GIST_LENGTH = 64  # characters of a message's text shown in its one-line summary
# The main agent's calls in the first part of a split run: the task, then the task sent again
# with the first round added. Two are enough to show that the model remembers nothing.
FIRST_CALLS = 2

LABELS = {
    "en": {
        "summary": "{calls} model calls. The request grows from {first:,} to {last:,} bytes.",
        "summary_first": (
            "The first {shown} of {calls} model calls. The request grows from {first:,} to "
            "{last:,} bytes."
        ),
        "summary_subagents": (
            "{calls} model calls: {main} by the main agent, {count} by {agents} subagents. The "
            "main agent's request grows from {first:,} to {last:,} bytes; the largest request of "
            "a subagent is {largest:,} bytes."
        ),
        "summary_compacted": (
            "{calls} model calls. The request grows from {first:,} to {peak:,} bytes; call "
            "{summary} asks for a summary of that history, and the next request starts again "
            "from {after:,} bytes."
        ),
        "chart_title": "{version}: the size of every request, in order",
        "chart_desc": "One bar per model call; a subagent's calls are in another colour.",
        "chart_desc_compacted": (
            "One bar per model call; the summary request, which compacts the history, is in "
            "another colour."
        ),
        "summary_call": "{} (summary)",
        "call": "Call {}",
        "bytes": "{:,} bytes",
        "messages": "messages: {count}, new: {new}",
        "stop": "stop_reason {}",
        "tokens": "tokens: in {input_tokens:,}, out {output_tokens:,}",
        "cache": ", cache write {cache_write:,}, cache read {cache_read:,}",
        "request": "Request",
        "reply": "Reply",
        "error": "HTTP {status}",
        "system": "system",
        "tools": "tools",
        "other": "the other fields",
        "new": "new",
        "unchanged": "unchanged since {}",
        "reply_to": "the reply to {}",
        "subagents": "Subagents started by this call",
        "subagent": "Subagent {letter} ({agent_type}): {description}",
        "subagent_calls": "{count} model calls on a history of its own",
        "characters": "{:,} characters",
        "scripted": "A scripted demo: a scripted model answered these requests, not Claude.",
        "recorded": "Recorded from {model} on {date}.",
        "recorded_at": "Recorded from {model} at {upstream} on {date}.",
    },
    "ja": {
        "summary": (
            "モデル呼び出しは {calls} 回です。リクエストは {first:,} バイトから {last:,} バイトに"
            "増えます。"
        ),
        "summary_first": (
            "{calls} 回のモデル呼び出しのうち、最初の {shown} 回です。リクエストは {first:,} "
            "バイトから {last:,} バイトに増えます。"
        ),
        "summary_subagents": (
            "モデル呼び出しは {calls} 回です。メインエージェントが {main} 回、{agents} つの"
            "サブエージェントが合わせて {count} 回です。メインエージェントのリクエストは "
            "{first:,} バイトから {last:,} バイトに増えます。サブエージェントの最大のリクエストは "
            "{largest:,} バイトです。"
        ),
        "summary_compacted": (
            "モデル呼び出しは {calls} 回です。リクエストは {first:,} バイトから {peak:,} バイトに"
            "増えます。呼び出し {summary} がその履歴の要約を求め、次のリクエストは {after:,} "
            "バイトからやり直します。"
        ),
        "chart_title": "{version}: すべてのリクエストの大きさ（送った順）",
        "chart_desc": (
            "モデル呼び出し 1 回につき 1 本の棒。サブエージェントの呼び出しは色を変えています。"
        ),
        "chart_desc_compacted": (
            "モデル呼び出し 1 回につき 1 本の棒。履歴をコンパクションする要約のリクエストは色を"
            "変えています。"
        ),
        "summary_call": "{}（要約）",
        "call": "呼び出し {}",
        "bytes": "{:,} バイト",
        "messages": "メッセージ {count} 件（新規 {new} 件）",
        "stop": "stop_reason {}",
        "tokens": "トークン: 入力 {input_tokens:,}、出力 {output_tokens:,}",
        "cache": "、キャッシュ書き込み {cache_write:,}、キャッシュ読み込み {cache_read:,}",
        "request": "リクエスト",
        "reply": "応答",
        "error": "HTTP {status}",
        "system": "system",
        "tools": "tools",
        "other": "その他のフィールド",
        "new": "新規",
        "unchanged": "{} から変わらず",
        "reply_to": "{} への応答",
        "subagents": "この呼び出しが起動したサブエージェント",
        "subagent": "サブエージェント {letter}（{agent_type}）: {description}",
        "subagent_calls": "自分だけの履歴でモデルを {count} 回呼び出す",
        "characters": "{:,} 文字",
        "scripted": (
            "スクリプトによるデモです。これらのリクエストに答えたのは Claude ではなく、台本どおりに"
            "答えるモデルです。"
        ),
        "recorded": "{date} に {model} とのやり取りを記録したものです。",
        "recorded_at": "{date} に {upstream} の {model} とのやり取りを記録したものです。",
    },
}

# -- the recording, as a tree of calls -------------------------------------------------------


@dataclass
class Call:
    request: int  # 1-based, in the order the server received the requests
    track: str
    size: int  # bytes of the body, as received
    body: dict
    reply: dict  # {"status": 200, "body": the message} or an error
    label: str = ""  # "1" for the main agent's first call, "A2" for subagent A's second
    subagents: list[Subagent] = field(default_factory=list)

    def reply_content(self) -> list[dict]:
        return self.reply["body"].get("content", []) if self.reply["status"] == 200 else []


@dataclass
class Subagent:
    letter: str
    task: dict  # the `Task` tool_use block that started it
    calls: list[Call]


def load_recording(path: Path) -> list[dict]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def from_session(path: Path) -> tuple[list[dict], dict]:
    """A session recorded with python -m scripted.record, in the shape the pages are made from
    (what `python -m scripted.demo --record` saves), and the file's header, which says where it
    came from. No track is recorded from Claude, so a request is a subagent's when its first
    message is the prompt of a `Task` call the model made before it, as call_tree() nests them."""
    session = replay.load_recording(path)
    prompts: set[str] = set()
    records = []
    for exchange in session.exchanges:
        if not isinstance(exchange.body, dict) or "messages" not in exchange.body:
            continue  # another endpoint (a model list): no model call to show
        first = plain_text(exchange.body["messages"][0]["content"])
        reply = {"status": exchange.status, "body": replay.final_message(exchange) or {}}
        records.append(
            {
                "track": first if first in prompts else MAIN_TRACK,
                "size": exchange.size,
                "raw": json.dumps(exchange.body, ensure_ascii=False),
                "reply": reply,
            }
        )
        call = Call(0, MAIN_TRACK, exchange.size, exchange.body, reply)
        prompts.update(task["input"].get("prompt", "") for task in task_calls(call))
    return records, session.header


def source_label(header: dict | None, language: str) -> str:
    """Where the requests on a page were answered: a scripted demo (header None, or a session
    recorded with the scripted model standing in), or a model on a day."""
    text = LABELS[language]
    if header is None or header["upstream"].startswith("scripted"):
        return text["scripted"]
    if header["upstream"] == "https://api.anthropic.com":
        return text["recorded"].format(model=header["model"], date=header["date"])
    return text["recorded_at"].format(**header)


def call_tree(recording: list[dict]) -> list[Call]:
    """The main agent's calls, each holding the subagents its `Task` calls started."""
    calls = [
        Call(number, record["track"], record["size"], json.loads(record["raw"]), record["reply"])
        for number, record in enumerate(recording, 1)
    ]
    main = [call for call in calls if call.track == MAIN_TRACK]
    conversations = subagent_conversations([call for call in calls if call.track != MAIN_TRACK])
    letters = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    for number, call in enumerate(main, 1):
        call.label = str(number)
        for task in task_calls(call):
            prompt = task["input"].get("prompt", "")
            if prompt not in conversations:
                continue  # a Task that failed before its subagent sent anything
            subagent = Subagent(next(letters), task, conversations.pop(prompt))
            for round_number, child in enumerate(subagent.calls, 1):
                child.label = f"{subagent.letter}{round_number}"
            call.subagents.append(subagent)
    if conversations:
        raise ValueError(f"subagent requests no Task call started: {sorted(conversations)}")
    return main


def subagent_conversations(calls: list[Call]) -> dict[str, list[Call]]:
    """A subagent's requests by the prompt it was given: the first message of each of them."""
    conversations: dict[str, list[Call]] = {}
    for call in calls:
        prompt = plain_text(call.body["messages"][0]["content"])
        conversations.setdefault(prompt, []).append(call)
    return conversations


def task_calls(call: Call) -> list[dict]:
    return [
        block
        for block in call.reply_content()
        if block.get("type") == "tool_use" and block.get("name") == "Task"
    ]


def summary_requests(main: list[Call]) -> list[Call]:
    """The main agent's requests that asked for a summary to compact the history (v5): each one
    right before a request that starts again from a single message, the fresh history."""
    return [
        before
        for before, after in zip(main, main[1:], strict=False)
        if len(after.body["messages"]) == 1 and len(before.body["messages"]) > 1
    ]


def every_call(main: list[Call]) -> list[Call]:
    """All calls in the order the page shows them: each main call, then its subagents' calls."""
    calls = []
    for call in main:
        calls.append(call)
        for subagent in call.subagents:
            calls += subagent.calls
    return calls


# -- writing it as HTML ----------------------------------------------------------------------


def canonical(data: object) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def pretty(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def gist(message: dict) -> str:
    """One line that says what a message holds: its texts, tool calls and tool results."""
    content = message["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    parts = []
    for block in blocks:
        if block["type"] == "text":
            parts.append(clip_line(block["text"]))
        elif block["type"] == "thinking":  # signed; it goes back exactly as it came
            parts.append(f"thinking: {clip_line(block.get('thinking', ''))}")
        elif block["type"] == "tool_use":
            parts.append(f"tool_use {block['name']}")
        elif block["type"] == "tool_result":
            parts.append(f"tool_result: {clip_line(plain_text(block.get('content', '')))}")
        else:
            parts.append(block["type"])
    return " · ".join(parts)


def code_block(text: str, kind: str, ident: str = "") -> str:
    anchor = f' id="{ident}"' if ident else ""
    return f'<pre class="{kind}"{anchor}><code>{escape(text)}</code></pre>'


def clip_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= GIST_LENGTH else line[: GIST_LENGTH - 1] + "…"


class Page:
    """One version's fragment in one language. Remembers what it has shown in full, so that a
    part sent again is shown as a pointer to its first appearance."""

    def __init__(self, version: str, language: str) -> None:
        self.version = version
        self.language = language
        self.text = LABELS[language]
        self.shown: dict[str, tuple[str, str]] = {}  # canonical JSON -> (element id, call name)

    def ident(self, call: Call, part: str = "") -> str:
        return f"hood-{self.version}-{call.label}" + (f"-{part}" if part else "")

    def call_name(self, call: Call) -> str:
        return self.text["call"].format(call.label)

    def render(self, main: list[Call], source: str) -> str:
        """The whole run: its summary, the chart, every call. `source` says where the requests
        were answered (source_label())."""
        return self.section(main, main, self.summary(main), source, chart=True)

    def render_split(
        self, main: list[Call], source: str, first: int = FIRST_CALLS
    ) -> tuple[str, str]:
        """The run in two parts for one page: the main agent's first calls (with their subagents),
        then the chart and the other calls. A part sent again points back, into the first part.
        Each part says where the requests were answered."""
        head, tail = main[:first], main[first:]
        summary = self.text["summary_first"].format(
            shown=len(every_call(head)),
            calls=len(every_call(main)),
            first=head[0].size,
            last=head[-1].size,
        )
        return (
            self.section(main, head, summary, source, chart=False, part="first"),
            self.section(main, tail, self.summary(main), source, chart=True, part="rest"),
        )

    def summary(self, main: list[Call]) -> str:
        calls = every_call(main)
        compacted = summary_requests(main)
        if compacted:  # the request does not only grow: say where it drops
            after = main[main.index(compacted[0]) + 1]
            return self.text["summary_compacted"].format(
                calls=len(calls),
                first=main[0].size,
                peak=max(call.size for call in main),
                summary=compacted[0].label,
                after=after.size,
            )
        children = [call for call in calls if call.track != MAIN_TRACK]
        subagents = [subagent for call in main for subagent in call.subagents]
        return self.text["summary_subagents" if subagents else "summary"].format(
            calls=len(calls),
            main=len(main),
            count=len(children),
            agents=len(subagents),
            first=main[0].size,
            last=main[-1].size,
            largest=max([call.size for call in children], default=0),
        )

    def chart(self, calls: list[Call]) -> str:
        compacted = summary_requests([call for call in calls if call.track == MAIN_TRACK])
        rows = []
        for call in calls:
            label, kind = self.call_name(call), "main" if call.track == MAIN_TRACK else "sub"
            if any(call is summary for summary in compacted):
                label, kind = self.text["summary_call"].format(label), "summary"
            rows.append(Bar(label, call.size, self.text["bytes"].format(call.size), kind))
        return bar_chart(
            f"hood-{self.version}-chart",
            rows,
            self.text["chart_title"].format(version=self.version),
            self.text["chart_desc_compacted" if compacted else "chart_desc"],
            pair=PAIR[self.language],
        )

    def section(
        self,
        main: list[Call],
        shown: list[Call],
        summary: str,
        source: str,
        chart: bool,
        part: str = "",
    ) -> str:
        """One <section class="hood">: `shown`, some of the main agent's calls of the run `main`.
        data-calls is the number of calls of the whole run, in every part."""
        figure = self.chart(every_call(main)) if chart else ""
        body = "".join(self.call(call) for call in shown)
        part_attribute = f' data-part="{part}"' if part else ""
        return (
            # Search would find every word of every request many times over: left out of the index.
            # A <section>, not a <div>: Material's indexer ends an exclusion at the first closing
            # tag of the same name, and the calls hold <div>s.
            f'<section class="hood" data-version="{self.version}" '
            f'data-calls="{len(every_call(main))}"{part_attribute} '
            'data-search-exclude="data-search-exclude">\n'
            f'<p class="hood-source">{escape(source)}</p>\n'
            f'<p class="hood-summary">{escape(summary)}</p>\n{figure}{body}</section>\n'
        )

    def call(self, call: Call) -> str:
        messages = call.body["messages"]
        request_parts = [
            self.once(call, "system", self.text["system"], call.body.get("system", "")),
            self.once(call, "tools", self.tools_title(call), call.body.get("tools", [])),
        ]
        items, new = [], 0
        for index, message in enumerate(messages):
            item, is_new = self.message(call, index, message)
            items.append(item)
            new += is_new
        other = {
            key: value
            for key, value in call.body.items()
            if key not in ("system", "tools", "messages")
        }
        request_parts.append(
            f'<ol class="hood-messages" start="0">\n{"".join(items)}</ol>\n'
            f'<details class="hood-part hood-other" id="{self.ident(call, "other")}">'
            f"<summary>{escape(self.text['other'])}</summary>"
            f"{code_block(pretty(other), 'hood-json')}</details>\n"
        )
        facts = [
            self.text["bytes"].format(call.size),
            self.text["messages"].format(count=len(messages), new=new),
            *self.reply_facts(call),
        ]
        kind = "main" if call.track == MAIN_TRACK else "sub"
        return (
            f'<details class="hood-call hood-{kind}" id="{self.ident(call)}" '
            f'data-request="{call.request}" data-track="{escape(call.track)}" '
            f'data-size="{call.size}">\n'
            f"<summary><strong>{escape(self.call_name(call))}</strong> · "
            f"{escape(' · '.join(facts))}</summary>\n"
            f'<div class="hood-request"><p class="hood-label">{escape(self.text["request"])}'
            f"</p>\n{''.join(request_parts)}</div>\n"
            f"{self.reply(call)}{self.subagents(call)}</details>\n"
        )

    def tools_title(self, call: Call) -> str:
        names = ", ".join(tool["name"] for tool in call.body.get("tools", []))
        return f"{self.text['tools']}: {names}"

    def once(self, call: Call, part: str, title: str, value: object) -> str:
        """A part shown in full the first time it is sent, then as a pointer back to it."""
        key = canonical([part, value])
        if key in self.shown:
            ident, where = self.shown[key]
            return (
                f'<p class="hood-ref hood-{part}" data-ref="{ident}">{escape(title)}: '
                f'<a href="#{ident}">{escape(self.text["unchanged"].format(where))}</a></p>\n'
            )
        ident = self.ident(call, part)
        self.shown[key] = (ident, self.call_name(call))
        if isinstance(value, str):  # a system prompt reads better as text than as a JSON string
            shown, size = value, self.text["characters"].format(len(value))
            kind = "hood-text"
        else:
            shown, size, kind = pretty(value), "", "hood-json"
        facts = " · ".join(filter(None, [title, size, self.text["new"]]))
        return (
            f'<details class="hood-part hood-{part} hood-new" id="{ident}"><summary>'
            f"{escape(facts)}</summary>"
            f"{code_block(shown, kind)}</details>\n"
        )

    def message(self, call: Call, index: int, message: dict) -> tuple[str, bool]:
        head = f"[{index}] {message['role']}"
        key = canonical(["message", message])
        if key in self.shown:
            ident, where = self.shown[key]
            return (
                f'<li class="hood-ref" data-ref="{ident}">{escape(head)}: '
                f'<a href="#{ident}">{escape(where)}</a> · {escape(gist(message))}</li>\n',
                False,
            )
        ident = self.ident(call, f"m{index}")
        self.shown[key] = (ident, self.text["unchanged"].format(self.call_name(call)))
        return (
            f'<li class="hood-new"><details open="open" id="{ident}"><summary>{escape(head)} · '
            f'<span class="hood-badge">{escape(self.text["new"])}</span> · '
            f"{escape(gist(message))}</summary>"
            f"{code_block(pretty(message), 'hood-json')}</details></li>\n",
            True,
        )

    def reply_facts(self, call: Call) -> list[str]:
        if call.reply["status"] != 200:
            return [self.text["error"].format(status=call.reply["status"])]
        message = call.reply["body"]
        usage = message["usage"]
        tokens = self.text["tokens"].format(
            input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"]
        )
        written = usage.get("cache_creation_input_tokens")
        read = usage.get("cache_read_input_tokens")
        if written is not None or read is not None:  # as the screen: only where it is counted
            tokens += self.text["cache"].format(cache_write=written or 0, cache_read=read or 0)
        return [self.text["stop"].format(message["stop_reason"]), tokens]

    def reply(self, call: Call) -> str:
        ident = self.ident(call, "reply")
        if call.reply["status"] == 200:
            content = call.reply_content()
            # The script sends this back as the next request's assistant message.
            echo = {"role": "assistant", "content": content}
            self.shown[canonical(["message", echo])] = (
                ident,
                self.text["reply_to"].format(self.call_name(call)),
            )
            shown = {
                "content": content,
                **{key: call.reply["body"][key] for key in ("stop_reason", "usage")},
            }
        else:
            shown = call.reply["body"]
        return (
            f'<div class="hood-reply"><p class="hood-label">{escape(self.text["reply"])} · '
            f"{escape(' · '.join(self.reply_facts(call)))}</p>\n"
            f"{code_block(pretty(shown), 'hood-json', ident)}</div>\n"
        )

    def subagents(self, call: Call) -> str:
        if not call.subagents:
            return ""
        parts = []
        for subagent in call.subagents:
            title = self.text["subagent"].format(
                letter=subagent.letter,
                agent_type=subagent.task["input"].get("agent_type", "?"),
                description=subagent.task["input"].get("description", ""),
            )
            count = self.text["subagent_calls"].format(count=len(subagent.calls))
            parts.append(
                f'<details class="hood-subagent" data-task="{escape(subagent.task["id"])}">'
                f"<summary>{escape(title)} · {escape(count)}</summary>\n"
                f"{''.join(self.call(child) for child in subagent.calls)}</details>\n"
            )
        return (
            f'<div class="hood-subagents"><p class="hood-label">{escape(self.text["subagents"])}'
            f"</p>\n{''.join(parts)}</div>\n"
        )


def hood_path(language: str, version: str, part: str = "") -> Path:
    """hood/en/v1.html, the whole run; hood/en/v1-first.html and hood/en/v1-rest.html, its parts."""
    return Path("hood") / language / (f"{version}-{part}.html" if part else f"{version}.html")


def record_path(version: str) -> Path:
    return Path("hood") / "records" / f"{version}.json"


def hood_files(recordings: dict[str, list[dict]]) -> dict[Path, str]:
    """Each version's fragment in each language, whole and split in two, and the recordings they
    were made from (the tests compare the two), by path under .generated/."""
    files = {}
    for version, recording in recordings.items():
        files[record_path(version)] = json.dumps(recording, indent=1, ensure_ascii=False)
        main = call_tree(recording)
        for language in LABELS:
            source = source_label(None, language)
            files[hood_path(language, version)] = Page(version, language).render(main, source)
            first, rest = Page(version, language).render_split(main, source)
            files[hood_path(language, version, "first")] = first
            files[hood_path(language, version, "rest")] = rest
    return files


def hide_folder(record: Path, folder: str) -> None:
    """Mask the random part of the demo's work folder (/tmp/agent-demo-v1-k2j4h7sd becomes
    /tmp/agent-demo-v1-xxxxxxxx), so two builds make the same pages. Same length, so each request
    keeps the size the server measured."""
    head, _, random_part = folder.rpartition("-")
    masked = f"{head}-{'x' * len(random_part)}"
    recording = load_recording(record)
    for request in recording:
        request["raw"] = request["raw"].replace(folder, masked)
    record.write_text(json.dumps(recording, ensure_ascii=False), encoding="utf-8")
