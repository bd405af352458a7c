"""Charts on the pages, drawn as SVG while the site is built: no plotting library, nothing loaded
from another host, and no number typed twice.

    charts/en/context-hygiene.html   request sizes per model call: v2 reads 20 files inline,
                                     v3 has an explore subagent read them: the run of
                                     bench/context_hygiene.py whose numbers the v3 page quotes
    charts/en/gistdex.html           the gistdex case of the Context budget chapter (GISTDEX below)

(and the same under charts/ja/). Each file is one <figure> with an inline <svg>, so the page's own
colours apply: text is currentColor and the bars use mkdocs-material's CSS variables (see
docs_*/assets/hood.css), which keeps a chart readable in the dark scheme too.
"""

from dataclasses import dataclass
from html import escape
from pathlib import Path

# The gistdex case (docs_*/context-budget.md), from the gistdex authors' notes on their
# gistdex_agent_query tool: what one query returned, Claude Code's limit on one MCP tool response,
# how many results the query had (k=3, one iteration: the one measurement the note gives, of the
# tool as it was), and the ceilings they set for the two smaller modes (no mode was measured;
# `full` is planned to return what the tool returned). The pages' prose says the same numbers;
# tests/test_hood.py checks that it does.
GISTDEX = {
    "response_tokens": 48_727,
    "limit_tokens": 25_000,
    "results": 3,
    "detailed_tokens": 15_000,
    "summary_tokens": 5_000,
}

# How the phone layout writes a bar's label and its value on one line.
PAIR = {"en": "{label}: {value}", "ja": "{label}：{value}"}

LABELS = {
    "en": {
        "bytes": "{:,} bytes",
        "tokens": "{:,} tokens",
        "at_most": "at most {:,} tokens (target)",
        "hygiene_title": "Read 20 files, then answer: the size of every request, in order",
        "hygiene_desc": (
            "v2 reads the files itself: its largest request is {inline:,} bytes. v3 hands the "
            "reading to an explore subagent: the main agent's largest request is {main:,} bytes, "
            "{ratio:.3f} of v2's. The subagent's own requests grow as v2's do, but they are "
            "dropped when it reports."
        ),
        "inline_group": "{version}: the main agent reads",
        "delegated_group": "v3: an explore subagent reads",
        "main_call": "main agent, call {}",
        "sub_call": "subagent, call {}",
        "gistdex_title": "gistdex_agent_query: one response against the limit, and the three modes",
        "gistdex_desc": (
            "The one response the authors' note measured: the tool as it was, one query with "
            "{results} results, returned {response_tokens:,} tokens; Claude Code accepts at most "
            "{limit_tokens:,} from one MCP tool. The targets the note sets for the two smaller "
            "modes: summary (the default) at most {summary_tokens:,}, detailed at most "
            "{detailed_tokens:,}. No mode was measured; full is planned to return what the tool "
            "returned."
        ),
        "full": "the tool as it was, {results} results (measured)",
        "detailed": "detailed",
        "summary": "summary (the default)",
        "limit": "Claude Code's limit, {:,}",
    },
    "ja": {
        "bytes": "{:,} バイト",
        "tokens": "{:,} トークン",
        "at_most": "最大 {:,} トークン（目標）",
        "hygiene_title": "20 ファイルを読んでから答える: すべてのリクエストの大きさ（送った順）",
        "hygiene_desc": (
            "v2 はファイルを自分で読み、最大のリクエストは {inline:,} バイトです。v3 は読む仕事を "
            "explore サブエージェントに任せ、メインエージェントの最大のリクエストは {main:,} "
            "バイト、v2 の {ratio:.3f} 倍です。サブエージェント自身のリクエストは v2 と同じように"
            "大きくなりますが、報告を返した時点で捨てられます。"
        ),
        "inline_group": "{version}: メインエージェントが読む",
        "delegated_group": "v3: explore サブエージェントが読む",
        "main_call": "メインエージェント、{} 回目",
        "sub_call": "サブエージェント、{} 回目",
        "gistdex_title": "gistdex_agent_query: 1 回の応答と上限、そして 3 つのモード",
        "gistdex_desc": (
            "作者のメモが測った唯一の応答です。当時のツールで、検索結果 {results} 件の "
            "1 回の検索が {response_tokens:,} トークンを返しました。Claude Code が MCP ツール "
            "1 つから受け取るのは最大 {limit_tokens:,} トークンです。小さい 2 つのモードに"
            "メモが定めた目標は、summary（既定）が最大 {summary_tokens:,} トークン、detailed が"
            "最大 {detailed_tokens:,} トークンです。どのモードも測られていません。full は、"
            "当時のツールと同じものを返す計画です。"
        ),
        "full": "当時のツール、結果 {results} 件（測定値）",
        "detailed": "detailed",
        "summary": "summary（既定）",
        "limit": "Claude Code の上限 {:,}",
    },
}

# -- drawing ---------------------------------------------------------------------------------


@dataclass
class Bar:
    label: str
    value: int
    text: str  # what is written after the bar, e.g. "4,939 bytes"
    kind: str = "main"  # the CSS class: main, sub (a subagent's), over (too large), fit, summary


@dataclass
class Group:
    title: str  # a row of text only, above the bars it names


ROW = 22  # pixels per row
BAR = 13  # height of a bar
FONT = 12  # font size of every text
VALUE_ROOM = 190  # room right of the longest bar for its text
WIDTH = 720
# The phone layout: text on a row of its own above each bar, in a narrower drawing, so that a
# chart 300 px wide still shows its text at 9 px. The page shows one layout or the other by the
# width it has (hood.css).
NARROW_WIDTH = 400
TEXT_ROW = 16
BAR_ROW = 16


def text_width(text: str) -> int:
    """About how wide a text is drawn at FONT pixels: wide (CJK) characters count double."""
    return sum(FONT if ord(char) > 0x2E80 else FONT * 0.6 for char in text).__ceil__()


def svg_open(ident: str, layout: str, width: int, height: int, title: str, desc: str) -> list[str]:
    return [
        f'<svg class="hood-svg hood-{layout}" viewBox="0 0 {width} {height}" width="100%" '
        f'role="img" aria-labelledby="{ident}-t {ident}-d" xmlns="http://www.w3.org/2000/svg" '
        f'font-size="{FONT}" fill="currentColor">',
        f'<title id="{ident}-t">{escape(title)}</title>',
        f'<desc id="{ident}-d">{escape(desc)}</desc>',
    ]


def limit_line(x: int, top: int, bottom: int) -> str:
    return (
        f'<line class="limit" x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" '
        'stroke="currentColor" stroke-dasharray="4 3"/>'
    )


def limit_label(x: int, y: int, text: str) -> str:
    return f'<text class="limit-label" x="{x}" y="{y}" text-anchor="middle">{escape(text)}</text>'


def wide_svg(
    ident: str, rows: list[Bar | Group], title: str, desc: str, marker: tuple[int, str] | None
) -> str:
    """Labels left of the bars, each value after its bar; a limit runs down across the bars, and
    a value that would cross it is written after it instead."""
    label_room = max(text_width(row.label) for row in rows if isinstance(row, Bar)) + 16
    scale_room = WIDTH - label_room - VALUE_ROOM
    values = [row.value for row in rows if isinstance(row, Bar)]
    largest = max(values + [marker[0] if marker else 0])
    top = ROW if marker else 4
    height = top + ROW * len(rows) + 4
    limit_x = label_room + round(marker[0] / largest * scale_room) if marker else None
    parts = svg_open(ident, "wide", WIDTH, height, title, desc)
    for index, row in enumerate(rows):
        y = top + ROW * index
        if isinstance(row, Group):
            parts.append(f'<text x="0" y="{y + 15}" font-weight="bold">{escape(row.title)}</text>')
            continue
        length = max(1, round(row.value / largest * scale_room))
        text_x = label_room + length + 6
        if limit_x is not None and text_x - 6 < limit_x < text_x + text_width(row.text) + 4:
            text_x = limit_x + 6
        parts += [
            f'<text x="{label_room - 8}" y="{y + 15}" text-anchor="end">{escape(row.label)}</text>',
            f'<rect class="bar-{row.kind}" x="{label_room}" y="{y + 5}" width="{length}" '
            f'height="{BAR}"/>',
            f'<text x="{text_x}" y="{y + 15}">{escape(row.text)}</text>',
        ]
    if marker and limit_x is not None:
        parts += [limit_line(limit_x, top - 4, height), limit_label(limit_x, top - 8, marker[1])]
    parts.append("</svg>")
    return "".join(parts)


def narrow_svg(
    ident: str,
    rows: list[Bar | Group],
    title: str,
    desc: str,
    marker: tuple[int, str] | None,
    pair: str,
) -> str:
    """Each bar under its own line of text, "label: value"; a limit crosses the bars only."""
    values = [row.value for row in rows if isinstance(row, Bar)]
    largest = max(values + [marker[0] if marker else 0])
    scale_room = NARROW_WIDTH - 8
    top = ROW if marker else 4
    heights = [ROW if isinstance(row, Group) else TEXT_ROW + BAR_ROW for row in rows]
    height = top + sum(heights) + 4
    limit_x = round(marker[0] / largest * scale_room) if marker else None
    parts = svg_open(f"{ident}-narrow", "narrow", NARROW_WIDTH, height, title, desc)
    y = top
    for row, row_height in zip(rows, heights, strict=True):
        if isinstance(row, Group):
            parts.append(f'<text x="0" y="{y + 15}" font-weight="bold">{escape(row.title)}</text>')
        else:
            length = max(1, round(row.value / largest * scale_room))
            text = pair.format(label=row.label, value=row.text)
            parts += [
                f'<text x="0" y="{y + 12}">{escape(text)}</text>',
                f'<rect class="bar-{row.kind}" x="0" y="{y + TEXT_ROW + 1}" width="{length}" '
                f'height="{BAR_ROW - 5}"/>',
            ]
            if limit_x is not None:
                # across the bar only: the text above it may reach down to its row's end
                parts.append(limit_line(limit_x, y + TEXT_ROW + 1, y + TEXT_ROW + BAR_ROW - 2))
        y += row_height
    if marker and limit_x is not None:
        parts.append(limit_label(limit_x, top - 8, marker[1]))
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(
    ident: str,
    rows: list[Bar | Group],
    title: str,
    description: str,
    marker: tuple[int, str] | None = None,
    pair: str = "{label}: {value}",
) -> str:
    """Horizontal bars, one row each, with an optional vertical line (a limit) across them. ident
    names the chart's title and description for screen readers: unique on its page. Drawn twice,
    wide and narrow (pair joins a bar's label and value in the narrow one); the page shows one."""
    wide = wide_svg(ident, rows, title, description, marker)
    narrow = narrow_svg(ident, rows, title, description, marker, pair)
    return (
        f'<figure class="hood-chart">\n{wide}\n{narrow}\n'
        f"<figcaption>{escape(title)}</figcaption>\n</figure>\n"
    )


# -- the context-hygiene chart (v3) -----------------------------------------------------------


def context_hygiene_chart(hygiene: dict, language: str) -> str:
    """hygiene: what `bench/context_hygiene.py --json` printed (docsgen/numbers.py measures it)."""
    labels = LABELS[language]
    rows: list[Bar | Group] = []
    for run, group in [("inline", "inline_group"), ("delegated", "delegated_group")]:
        rows.append(Group(labels[group].format(version=hygiene["previous"])))
        counts = {"main": 0, "sub": 0}
        for request in hygiene["requests"][run]:
            kind = "main" if request["track"] == "default" else "sub"
            counts[kind] += 1
            label = labels[f"{kind}_call"].format(counts[kind])
            rows.append(Bar(label, request["size"], labels["bytes"].format(request["size"]), kind))
    inline, main = hygiene["inline"], hygiene["delegated"]
    description = labels["hygiene_desc"].format(inline=inline, main=main, ratio=main / inline)
    return bar_chart(
        "chart-hygiene", rows, labels["hygiene_title"], description, pair=PAIR[language]
    )


# -- the gistdex chart (Context budget) --------------------------------------------------------


def gistdex_chart(language: str) -> str:
    labels = LABELS[language]
    rows: list[Bar | Group] = [
        Bar(
            labels["full"].format(**GISTDEX),
            GISTDEX["response_tokens"],
            labels["tokens"].format(GISTDEX["response_tokens"]),
            "over",
        ),
        Bar(
            labels["detailed"],
            GISTDEX["detailed_tokens"],
            labels["at_most"].format(GISTDEX["detailed_tokens"]),
            "fit",
        ),
        Bar(
            labels["summary"],
            GISTDEX["summary_tokens"],
            labels["at_most"].format(GISTDEX["summary_tokens"]),
            "fit",
        ),
    ]
    limit = (GISTDEX["limit_tokens"], labels["limit"].format(GISTDEX["limit_tokens"]))
    description = labels["gistdex_desc"].format(**GISTDEX)
    return bar_chart(
        "chart-gistdex", rows, labels["gistdex_title"], description, limit, PAIR[language]
    )


def chart_path(language: str, name: str) -> Path:
    return Path("charts") / language / f"{name}.html"


def chart_files(hygiene: dict) -> dict[Path, str]:
    """Every chart, in both languages, by its path under .generated/."""
    files = {}
    for language in LABELS:
        files[chart_path(language, "context-hygiene")] = context_hygiene_chart(hygiene, language)
        files[chart_path(language, "gistdex")] = gistdex_chart(language)
    return files
