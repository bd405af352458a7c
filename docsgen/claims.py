"""Sentences that say what a generated figure means, checked against the figure on every build.

A page quotes a figure as `{{ name }}` (docsgen/numbers.py), so the figure is never stale. A
sentence that says something about it ("caches nothing", "reads all it could") could still go
stale when the figure moves. Such a sentence carries its claim beside it, in a comment the reader
never sees:

    the session reads {{ caching.ratio }} of that: all it could.
    <!-- check: caching.read == caching.limit -->

Each side of a claim is a figure's name or a number; the comparisons are ==, !=, <, <=, > and >=.
docsgen/hooks.py checks every claim on a page before it fills in the figures: a false claim, or
one naming a figure the build does not make, stops the build and names the page, the claim and
the figures. The comments are taken out of the page. The English and the Japanese page carry the
same claims (tests/test_claims.py checks it).

A chapter's table of the plumbing it leans on is checked the same way: in a row that starts with a
module, linked to its file (| [`budget`](.../plumbing/budget.py) | `clip` | ...), the names in
the second column are exactly those the chapter's script imports from that module. A table that
lists every script or every exercise is marked so (`<!-- rows: scripts -->`), and its first column
is checked against the files.
"""

import ast
import operator
import re

from scripted import ROOT, SCRIPTS
from workshop.reference import EXERCISES

CLAIM = re.compile(r"<!-- check: (?P<claim>.+?) -->")
# A claim on a line of its own goes with its line, so the paragraph around it stays one.
CLAIM_LINE = re.compile(r"^[ \t]*<!-- check: .+? -->[ \t]*\n", re.M)
COMPARISON = re.compile(r"^(?P<left>\S+) (?P<op>==|!=|<=|>=|<|>) (?P<right>\S+)$")
OPERATORS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class FalseClaim(ValueError):
    """A sentence a page states about a figure is not true of it: the message says which."""


def figure(side: str, numbers: dict[str, str], page: str, claim: str) -> float:
    """A side of a claim as a number: a literal, or a figure as the page shows it (30,000, 0.050,
    90.7%)."""
    text = numbers.get(side, side)
    try:
        return float(text.replace(",", "").removesuffix("%"))
    except ValueError:
        raise FalseClaim(
            f"{page} claims `{claim}`, but {side!r} is neither a number nor a figure docsgen/"
            "numbers.py makes"
        ) from None


def check_claims(markdown: str, numbers: dict[str, str], page: str) -> str:
    """The page without its claim comments, once every claim holds; a FalseClaim otherwise."""
    for match in CLAIM.finditer(markdown):
        claim = match["claim"].strip()
        parts = COMPARISON.match(claim)
        if not parts:
            raise FalseClaim(f"{page}: cannot read the claim `{claim}` (write: name op name)")
        left = figure(parts["left"], numbers, page, claim)
        right = figure(parts["right"], numbers, page, claim)
        if not OPERATORS[parts["op"]](left, right):
            shown = {side: numbers[side] for side in (parts["left"], parts["right"])
                     if side in numbers}
            raise FalseClaim(
                f"{page} says something only true if {claim}, and the build made {shown}: "
                "rewrite the sentence beside the claim, then the claim"
            )
    return CLAIM.sub("", CLAIM_LINE.sub("", markdown))


def claims_of(markdown: str) -> list[str]:
    """The claims a page makes, in order."""
    return [match["claim"].strip() for match in CLAIM.finditer(markdown)]


# | [`budget`](https://.../plumbing/budget.py) | `clip`, `cut_note` | what it guards against |
PLUMBING_ROW = re.compile(
    r"^\| \[`(?P<module>\w+)`\]\([^)]*plumbing/(?P=module)\.py\) \| (?P<names>[^|]*) \|", re.M
)
CODE_NAME = re.compile(r"`(\w+)`")


def plumbing_imports(source: str) -> dict[str, list[str]]:
    """The names a script imports from each plumbing module, by module."""
    imported: dict[str, list[str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("plumbing."):
            module = node.module.removeprefix("plumbing.")
            imported.setdefault(module, []).extend(alias.name for alias in node.names)
    return imported


def check_plumbing_table(markdown: str, script: str, source: str, page: str) -> None:
    """A FalseClaim if a row of the page's plumbing table names what the script does not import
    from that module, or leaves out what it does, or if a module it imports has no row."""
    imported = plumbing_imports(source)
    rows = {row["module"]: CODE_NAME.findall(row["names"])
            for row in PLUMBING_ROW.finditer(markdown)}
    if not rows:
        return
    wrong = []
    for module, names in imported.items():
        listed = rows.get(module)
        if listed is None:
            wrong.append(f"no row for {module} ({script} imports {', '.join(names)})")
        elif sorted(listed) != sorted(names):
            extra = sorted(set(listed) - set(names))
            missing = sorted(set(names) - set(listed))
            wrong.append(f"{module}: lists {extra or 'nothing'} that {script} does not import, "
                         f"leaves out {missing or 'nothing'} that it does")
    wrong += [f"a row for {module}, which {script} does not import" for module in rows
              if module not in imported]
    if wrong:
        raise FalseClaim(f"{page}'s plumbing table is not {script}'s import block: "
                         + "; ".join(wrong))


# A table that lists every script or every exercise says so just above itself, in a comment the
# reader never sees; the build checks its first column against the files, so a seventh script or
# a ninth exercise cannot be left out of it:
#
#     <!-- rows: scripts -->        | `v1_basic.py` | ... one row per script, in order
#     <!-- rows: exercises -->      | 1 | ...         one row per workshop exercise, 1 to N
ROWS = re.compile(r"^[ \t]*<!-- rows: (?P<kind>\w+) -->[ \t]*\n(?P<table>(?:\|.*\n?)*)", re.M)
ROWS_LINE = re.compile(r"^[ \t]*<!-- rows: \w+ -->[ \t]*\n", re.M)


def first_cells(table: str) -> list[str]:
    """The first cell of each row of a Markdown table, below its header and separator."""
    return [row.split("|")[1].strip() for row in table.splitlines()[2:] if row.startswith("|")]


def check_rows(markdown: str, listed: dict[str, list[str]], page: str) -> str:
    """The page without its row comments, once each marked table's first column is exactly the
    list its comment names (`listed`: kind -> the cells, in order); a FalseClaim otherwise."""
    for match in ROWS.finditer(markdown):
        kind = match["kind"]
        if kind not in listed:
            raise FalseClaim(f"{page}: a table claims one row per {kind!r}, which the build does "
                             f"not list (it lists {', '.join(sorted(listed))})")
        cells = first_cells(match["table"])
        if cells != listed[kind]:
            missing = [cell for cell in listed[kind] if cell not in cells]
            extra = [cell for cell in cells if cell not in listed[kind]]
            raise FalseClaim(
                f"{page}: the table marked `rows: {kind}` lists {', '.join(cells) or 'nothing'}; "
                f"the files give {', '.join(listed[kind])} (missing: {', '.join(missing) or 'none'}"
                f"; not there: {', '.join(extra) or 'none'}; else the order differs)"
            )
    return ROWS_LINE.sub("", markdown)


def listed_rows() -> dict[str, list[str]]:
    """What a `rows:` table must list, read from the files: the version scripts present, as code,
    and the workshop's exercises by number."""
    scripts = [f"`{script}`" for script in SCRIPTS.values() if (ROOT / script).exists()]
    return {"scripts": scripts, "exercises": [str(number + 1) for number in range(len(EXERCISES))]}
