"""The "What changed" card above each diff: what v(n+1) adds to v(n), counted from the two files.

    --8<-- "changes/en/v1-to-v2.html"

The card names the new tools (every tool schema in the file: a dict with a "name" and an
"input_schema"; from v6 on also the tools the demo's MCP server offered at run time, which no file
of the project holds: `served`), the new sections (the `# -- name --` headings the docs use), the
new top-level functions and classes, the ones whose code changed, and how many lines the diff
adds and removes.
The full diff follows it on the page, folded.
"""

import ast
import json
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

LABELS = {
    "en": {
        "title": "What changed from {old} to {new}",
        "tools": "New tools",
        "sections": "New sections",
        "functions": "New functions and classes",
        "changed": "Changed functions",
        "lines": "Lines",
        "counts": "{added} added, {removed} removed (the full diff is below)",
        "none": "none",
        "served": "{names} (offered by the demo's MCP server)",
    },
    "ja": {
        "title": "{old} から {new} への変更",
        "tools": "新しいツール",
        "sections": "新しいセクション",
        "functions": "新しい関数とクラス",
        "changed": "変更された関数",
        "lines": "行数",
        "counts": "追加 {added} 行、削除 {removed} 行（差分全体はこの下）",
        "none": "なし",
        "served": "{names}（デモの MCP サーバーが提供）",
    },
}


@dataclass
class Changes:
    tools: list[str]
    sections: list[str]
    functions: list[str]
    changed: list[str]
    added: int
    removed: int
    served: list[str] = field(default_factory=list)  # tools a server offered in the demo


def tool_names(source: str) -> list[str]:
    """The name of every tool schema written in a script, in the order they appear."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys = [key.value for key in node.keys if isinstance(key, ast.Constant)]
            if "name" in keys and "input_schema" in keys:
                value = node.values[keys.index("name")]
                if isinstance(value, ast.Constant):
                    names.append(value.value)
    return sorted(set(names), key=names.index)


def definitions(source: str) -> dict[str, str]:
    """Each top-level function and class by name, with its code."""
    lines = source.splitlines()  # (ast.get_source_segment splits the file again for each one)
    return {
        node.name: "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for node in ast.parse(source).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def diff_counts(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff (its ---/+++ file lines are not counted)."""
    lines = diff.splitlines()
    added = sum(line.startswith("+") and not line.startswith("+++ ") for line in lines)
    removed = sum(line.startswith("-") and not line.startswith("--- ") for line in lines)
    return added, removed


def what_changed(old_file: Path, new_file: Path, sections: list[list[str]], diff: str) -> Changes:
    """What new_file adds to old_file. sections: the section names of the two, in order."""
    old_source = old_file.read_text(encoding="utf-8")
    new_source = new_file.read_text(encoding="utf-8")
    old_sections, new_sections = sections
    old_definitions, new_definitions = definitions(old_source), definitions(new_source)
    added, removed = diff_counts(diff)
    old_tools = tool_names(old_source)
    return Changes(
        tools=[name for name in tool_names(new_source) if name not in old_tools],
        sections=[name for name in new_sections if name not in old_sections],
        functions=[name for name in new_definitions if name not in old_definitions],
        changed=[
            name
            for name, code in new_definitions.items()
            if name in old_definitions and old_definitions[name] != code
        ],
        added=added,
        removed=removed,
    )


def card(changes: Changes, old: str, new: str, language: str) -> str:
    text = LABELS[language]
    rows = []
    for key in ("tools", "sections", "functions", "changed"):
        names = getattr(changes, key)
        shown = ", ".join(f"<code>{escape(name)}</code>" for name in names)
        if key == "tools" and changes.served:
            served = ", ".join(f"<code>{escape(name)}</code>" for name in changes.served)
            shown = ", ".join(part for part in (shown, text["served"].format(names=served)) if part)
        shown = shown or text["none"]
        rows.append(f'<dt>{escape(text[key])}</dt><dd data-key="{key}">{shown}</dd>')
    counts = text["counts"].format(added=changes.added, removed=changes.removed)
    rows.append(
        f'<dt>{escape(text["lines"])}</dt><dd data-key="lines" data-added="{changes.added}" '
        f'data-removed="{changes.removed}">{escape(counts)}</dd>'
    )
    return (
        f'<div class="admonition abstract hood-card" data-diff="{old}-to-{new}">\n'
        f'<p class="admonition-title">{escape(text["title"].format(old=old, new=new))}</p>\n'
        f'<dl class="hood-card-list">\n{chr(10).join(rows)}\n</dl>\n</div>\n'
    )


def served_tools(old_recording: list[dict], new_recording: list[dict],
                 changes: Changes) -> list[str]:
    """The tools the new version's demo declared to the model that the old one's did not, and
    that no tool schema of the script holds: a server offered them at run time."""

    def declared(recording: list[dict]) -> list[str]:
        names = []
        for record in recording:
            names += [tool["name"] for tool in json.loads(record["raw"]).get("tools", [])]
        return sorted(set(names), key=names.index)

    before = set(declared(old_recording))
    return [name for name in declared(new_recording)
            if name not in before and name not in changes.tools]


def card_path(language: str, old: str, new: str) -> Path:
    return Path("changes") / language / f"{old}-to-{new}.html"


def card_files(old: str, new: str, changes: Changes) -> dict[Path, str]:
    """The card for one pair of versions, in every language, by path under .generated/."""
    return {card_path(language, old, new): card(changes, old, new, language) for language in LABELS}
