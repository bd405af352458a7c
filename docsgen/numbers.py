"""The numbers the pages quote, made on every build: a page writes `{{ hygiene.delegated }}` and
docsgen/hooks.py puts the number there. No number that comes from the code is typed on a page.

    constants of the scripts and benchmarks   read from their source (ast), never run; every
                                              number constant of a script is there, by name:
                                              {{ v3.REPORT_BUDGET }} is v3_subagents.py's
    the context-hygiene benchmark             run, with the caching one, in one process (what
                                              `bench/context_hygiene.py --json` prints); its
                                              sizes do not depend on the machine
    the caching benchmark                     run the same way (`bench/caching.py --json`)
    the compaction benchmark                  run the same way (`bench/compaction.py --json`):
                                              {{ compaction.clearing.billed }}, ..., and its
                                              printed table, .generated/bench/compaction.txt
    the MCP budget benchmark                  run in a process of its own, beside the others
                                              (`bench/mcp_budget.py --json`):
                                              {{ mcp.full_cut.share }}, ..., and its table,
                                              .generated/bench/mcp_budget.txt
    the models the scripted server knows      scripted/models.py: each one's cache minimum, ...
    a setting's default                       `MAX_TOKENS = int(os.environ.get("MAX_TOKENS",
                                              64_000))` gives {{ v1.MAX_TOKENS }}
    the demo transcripts                      token counts read off what the build just ran,
                                              and how many model and tool calls the main agent
                                              made: {{ v1.demo_calls }}, {{ v1.demo_tool_calls }}
    "Under the hood", split                   {{ hood.first_calls }}: the calls a chapter shows
                                              early (docsgen/hood.py's FIRST_CALLS)
    the gistdex case (Context budget)         docsgen/charts.py's GISTDEX, which its chart draws
    what v4 answers a made-up skill name      {{ v4.unknown_skill_error }}: the tool error of
                                              plumbing/checks.py, for the Skill tool the v4
                                              demo sent (its enum: every skill of the demo)
    how many scripts and exercises            {{ versions.count }}, {{ workshop.exercises }}: the
                                              version scripts present, workshop/reference.py's
                                              EXERCISES
    the diff between two versions             {{ v2.changed_lines }}: the lines of v1 that v2
                                              removes or changes, as tests/test_diff_budget.py
                                              counts them; {{ diff.budget }} is its limit

Times are not here: they depend on the machine, so the pages say how to measure them instead.
An unknown name on a page stops the build, naming the page and the name.
"""

import ast
import difflib
import itertools
import json
import os
import re
import tempfile
from pathlib import Path

from anthropic.types import ToolUseBlock

from docsgen.charts import GISTDEX
from docsgen.hood import FIRST_CALLS
from plumbing.checks import ToolError, check_tool_call
from scripted import ROOT, SCRIPTS
from scripted.models import MODELS
from scripted.server import CHARACTERS_PER_TOKEN
from scripted.warm import WarmPython
from workshop.reference import EXERCISES

PLACEHOLDER = re.compile(r"\{\{ *([^{}]*?) *\}\}")  # any {{ ... }}: an unknown name is an error
TOKENS = re.compile(
    r"^  \[tokens: in ([\d,]+), out [\d,]+, cache write ([\d,]+), cache read ([\d,]+)\]"
)
CACHE_READ = re.compile(r"cache read ([\d,]+)\]")
TOOL_CALL = re.compile(r"^> \w")  # a tool call of the main agent, as the transcript shows it


def constant(path: Path, name: str) -> object:
    """The value of a module-level `NAME = literal` in a file, read without running it."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [name]:
            return ast.literal_eval(node.value)
    raise KeyError(f"{path.name} has no constant {name}")


def number_constants(path: Path) -> dict[str, object]:
    """Every module-level `NAME = number` of a file (30_000, 0.2), read without running it, and
    the default of every `NAME = int(os.environ.get("NAME", 64_000))`."""
    found = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", "")
            try:
                value = ast.literal_eval(environment_default(node.value))
            except ValueError:
                continue
            if name.isupper() and type(value) in (int, float):
                found[name] = value
    return found


def environment_default(value: ast.expr) -> ast.expr:
    """The default of `os.environ.get(NAME, default)`, also inside `int(...)`; any other
    expression as it is."""
    if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "int" and value.args:
        value = value.args[0]
    if isinstance(value, ast.Call) and ast.unparse(value.func) == "os.environ.get":
        if len(value.args) == 2:
            return value.args[1]
    return value


def setting_default(path: Path, name: str) -> object:
    """The default of a setting read from the environment, as the script states it."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [name]:
            return ast.literal_eval(environment_default(node.value))
    raise KeyError(f"{path.name} has no setting {name}")


def as_shown(value: object) -> str:
    """A number as the pages write it: 30,000 and 0.2."""
    return f"{value:,}" if isinstance(value, int) else str(value)


# -- the size of a script, as cloc counts code (tests/test_lesson.py holds the scripts to it) --
PLUMBING_HEADING = "# -- plumbing -- "  # the block that imports the plumbing package


def code_lines(source: str) -> list[int]:
    """The numbers of the lines that are code: not blank, not only a comment, not a docstring."""
    docstring_lines = set()
    for node in ast.walk(ast.parse(source)):
        kinds = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
        if isinstance(node, kinds) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    docstring_lines.update(range(first.lineno, first.end_lineno + 1))
    numbers = []
    for number, line in enumerate(source.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#") and number not in docstring_lines:
            numbers.append(number)
    return numbers


def plumbing_line(source: str) -> int:
    """The line number of the plumbing heading; a ValueError if there is not exactly one."""
    numbers = [
        number
        for number, line in enumerate(source.splitlines(), 1)
        if line.startswith(PLUMBING_HEADING)
    ]
    if len(numbers) != 1:
        raise ValueError(f"expected one {PLUMBING_HEADING!r} heading, found {len(numbers)}")
    return numbers[0]


def plumbing_import_lines(source: str) -> set[int]:
    """The lines of the block that imports the plumbing package: the statements under the
    plumbing heading that import from it."""
    fence = plumbing_line(source)
    lines = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.lineno > fence:
            if (node.module or "").split(".")[0] == "plumbing":
                lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def lesson_code_lines(source: str) -> int:
    """The lesson's code lines: every code line of the script but the plumbing import block (the
    table of contents of what the lesson leans on)."""
    imports = plumbing_import_lines(source)
    return len([number for number in code_lines(source) if number not in imports])


def changed_lines(old: str, new: str) -> int:
    """How many lines of `old` a diff to `new` marks with '<': removed, or replaced by others."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    count = 0
    for tag, old_start, old_end, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            count += old_end - old_start
    return count


# The benchmarks the pages quote, measured in one process: each would import the SDK again.
BENCHMARKS = """
import json, sys
sys.path.insert(0, "bench")
import caching, compaction, context_hygiene
compacted = compaction.measure()
print(json.dumps({"caching": caching.measure(), "hygiene": context_hygiene.measure(),
                  "compaction": compacted, "compaction_table": compaction.table(compacted)}))
"""


# v6's benchmark starts v6 and an MCP server: in a process of its own, it runs beside the others.
MCP_BENCHMARK = """
import json, sys
sys.path.insert(0, "bench")
import mcp_budget
figures = mcp_budget.measure()
print(json.dumps({"mcp": figures, "mcp_table": mcp_budget.table(figures)}))
"""


def benchmark_figures(program: str = BENCHMARKS, python: WarmPython | None = None) -> dict:
    """bench/context_hygiene.py's sizes ("hygiene": the largest main-agent request, inline and
    delegated), bench/caching.py's figures ("caching": a v1 session's input tokens, read
    from the cache and at most) and bench/compaction.py's ("compaction": one long session
    played several ways; "compaction_table": the table it prints), as each gives them with
    --json. `program` runs from the project's root and prints them as one JSON object; python
    starts it (scripted/warm.py), a new interpreter if None."""
    with tempfile.TemporaryDirectory(prefix="docsgen-bench-") as folder:
        printed, errors = Path(folder) / "stdout", Path(folder) / "stderr"
        run = (python or WarmPython()).run
        code = run(["-c", program], dict(os.environ), printed, ROOT, 300, errors)
        if code != 0:
            raise RuntimeError(f"the benchmarks failed:\n{errors.read_text(encoding='utf-8')}")
        return json.loads(printed.read_text(encoding="utf-8"))


def main_agent_input(transcript: str) -> list[int]:
    """All the input tokens of each main-agent call, in order, as the transcript shows them:
    `in` (what the cache neither read nor wrote) + cache write + cache read."""
    found = [TOKENS.match(line) for line in transcript.splitlines()]
    totals = []
    for match in found:
        if match:
            totals.append(sum(int(figure.replace(",", "")) for figure in match.groups()))
    return totals


def cache_writes(transcript: str) -> list[int]:
    found = [TOKENS.match(line) for line in transcript.splitlines()]
    return [int(match[2].replace(",", "")) for match in found if match]


def model_numbers() -> dict[str, str]:
    """What the scripted server knows of each model, as {{ models.<id>.<field> }}."""
    numbers = {}
    for model_id, model in MODELS.items():
        for field in ("cache_minimum", "max_output", "context_window"):
            numbers[f"models.{model_id}.{field}"] = f"{getattr(model, field):,}"
    return numbers


def caching_numbers(figures: dict) -> dict[str, str]:
    return {
        "caching.calls": str(figures["calls"]),
        "caching.input": f"{figures['input']:,}",
        "caching.read": f"{figures['read']:,}",
        "caching.limit": f"{figures['limit']:,}",
        "caching.read_share": f"{figures['read'] / figures['input']:.1%}",
        "caching.limit_share": f"{figures['limit'] / figures['input']:.1%}",
        "caching.ratio": f"{figures['read'] / figures['limit']:.3f}",
    }


def compaction_numbers(figures: dict) -> dict[str, str]:
    """{{ compaction.<way>.<figure> }} for each way the session was played, the benchmark's
    settings ({{ compaction.WINDOW }}, ...), and the ratios the chapter quotes. What the chapter
    says of them is checked first (compaction_claims)."""
    compaction_claims(figures)
    numbers = {}
    for way, result in figures.items():
        for name, value in result.items():
            shown = as_shown(value)
            if isinstance(value, bool):
                shown = "yes" if value else "no"
            numbers[f"compaction.{way}.{name}"] = shown
    bench = ROOT / "bench" / "compaction.py"
    for name, value in number_constants(bench).items():
        numbers[f"compaction.{name}"] = as_shown(value)
    numbers["compaction.ways"] = str(len(figures))  # "played 7 ways"
    v5 = figures["compaction"]
    for way in ("cached", "resent", "clearing"):
        numbers[f"compaction.vs_{way}"] = f"{v5['billed'] / figures[way]['billed']:.2f}"
    numbers["compaction.saved_share"] = f"{1 - v5['billed'] / figures['cached']['billed']:.0%}"
    return numbers


def mcp_numbers(figures: dict) -> dict[str, str]:
    """{{ mcp.<way>.<figure> }} for each way bench/mcp_budget.py answered its query, each way's
    share of the uncut full answer's tokens ({{ mcp.full_cut.share }}) and of Claude Code's cap
    ({{ mcp.full_uncut.of_cap }}), the characters of each mode's answer ({{ mcp.sizes.full }}),
    and the benchmark's settings ({{ mcp.query }}, {{ mcp.budget }}, {{ mcp.cap }},
    {{ mcp.top }})."""
    numbers = {"mcp.query": figures["query"]}
    for name in ("budget", "cap", "top"):
        numbers[f"mcp.{name}"] = as_shown(figures[name])
    for mode, size in figures["sizes"].items():
        numbers[f"mcp.sizes.{mode}"] = as_shown(size)
    full = figures["ways"]["full_uncut"]["result_tokens"]
    for way, found in figures["ways"].items():
        for name, value in found.items():
            if isinstance(value, int) and not isinstance(value, bool):
                numbers[f"mcp.{way}.{name}"] = as_shown(value)
        numbers[f"mcp.{way}.share"] = f"{found['result_tokens'] / full:.3f}"
        numbers[f"mcp.{way}.of_cap"] = f"{found['result_tokens'] / figures['cap']:.1f}"
    ways = figures["ways"]
    extra = ways["summary_then_detailed"]["input"] - ways["detailed_cut"]["input"]
    numbers["mcp.second_call_input"] = as_shown(extra)  # summary first, against detailed at once
    return numbers


# What the v5 chapter says of the benchmark, each sentence with the check that keeps it true: a
# figure that drifts stops the build here, naming the sentence, instead of misleading a reader.
COMPACTION_CLAIMS = [
    ("without compaction the window overflows, and the user has to send a turn again",
     lambda f, window: f["resent"]["overflows"] > 0),
    ("after the overflows, the oldest results were cleared: the answer lost the facts",
     lambda f, window: f["resent"]["facts"] == 0),
    ("v5 stays inside the window: no request refused, its largest under the window",
     lambda f, window: f["compaction"]["overflows"] == 0 and f["compaction"]["largest"] < window),
    ("v5's answer keeps both facts when the summary keeps them",
     lambda f, window: f["compaction"]["facts"] == f["compaction"]["facts_asked"]),
    ("a summary that drops a fact loses it: the facts survive only as well as the summary",
     lambda f, window: f["lossy"]["facts"] == f["lossy"]["facts_asked"] - 1),
    ("clearing stays inside the window but clears the facts with the old results",
     lambda f, window: f["clearing"]["overflows"] == 0 and f["clearing"]["facts"] == 0),
    ("learn-claude-code's rule keeps every read_file result, so its history nears the window",
     lambda f, window: f["lcc"]["summaries"] >= 1 and f["lcc"]["largest"] > window * 0.9),
    ("v5 bills less input than the uncompacted session in a 1M window, and than every other way"
     " but the lossy summary's",
     lambda f, window: all(f["compaction"]["billed"] < f[way]["billed"]
                           for way in ("resent", "cached", "clearing", "lcc"))),
    ("the summaries cost output tokens, billed at the output price",
     lambda f, window: f["compaction"]["output"] > f["cached"]["output"]),
    ("the breakpoint at the system prompt's end saves input: without it, each compaction writes"
     " system and tools again",
     lambda f, window: f["compaction"]["billed"] < f["no_breakpoint"]["billed"]
     and f["no_breakpoint"]["after_read"] == 0),
    ("the first request after a compaction reads system and tools and writes the fresh history",
     lambda f, window: f["compaction"]["after_read"] > 0 and f["compaction"]["after_written"] > 0),
]


def compaction_claims(figures: dict) -> None:
    """Raise ValueError naming each sentence of the v5 chapter that the figures no longer bear."""
    window = constant(ROOT / "bench" / "compaction.py", "WINDOW")
    false = [claim for claim, holds in COMPACTION_CLAIMS if not holds(figures, window)]
    if false:
        raise ValueError("bench/compaction.py no longer bears out the v5 chapter: "
                         + "; ".join(false))


def compaction_demo_numbers(transcript: str) -> dict[str, str]:
    """The v5 demo's compaction, as its transcript shows it: the request that passed COMPACT_AT,
    what the summary request read from the cache, and the first request after it."""
    inputs = main_agent_input(transcript)
    summary = next(number for number, line in enumerate(transcript.splitlines())
                   if line.startswith("[compacted: "))
    before = len([line for line in transcript.splitlines()[:summary] if TOKENS.match(line)])
    reads = CACHE_READ.findall(transcript)
    return {
        "v5.demo_over": f"{inputs[before - 2]:,}",  # the round whose request passed COMPACT_AT
        "v5.demo_summary_input": f"{inputs[before - 1]:,}",
        "v5.demo_summary_read": reads[before - 1],
        "v5.demo_after": f"{inputs[before]:,}",
        "v5.demo_after_read": reads[before],  # system and tools, kept by their breakpoint
        "v5.demo_summary_call": str(before),  # its number in "Under the hood"
    }


WINDOWS = {"200k": 200_000, "1m": 1_000_000}  # the context windows of current Claude models


def compact_at_ceilings(script: Path) -> dict[str, str]:
    """The highest COMPACT_AT that still leaves the summary request room, for a 200k and a 1M
    window (the v5 chapter): the window less the summary's reply (MAX_TOKENS) and one round's
    growth past the line, taken as a reply of MAX_TOKENS and one tool result at
    TOOL_RESULT_BUDGET characters (four characters a token, the scripted server's rate)."""
    max_tokens = number_constants(script)["MAX_TOKENS"]
    result = constant(script, "TOOL_RESULT_BUDGET") // CHARACTERS_PER_TOKEN
    growth = max_tokens + result
    numbers = {"v5.result_tokens": f"{result:,}", "v5.round_growth": f"{growth:,}"}
    for name, window in WINDOWS.items():
        numbers[f"v5.window_{name}"] = f"{window:,}"
        numbers[f"v5.ceiling_{name}"] = f"{window - max_tokens - growth:,}"
    return numbers


def page_numbers(hygiene: dict, transcripts: dict[str, str], caching: dict,
                 compaction: dict | None = None, mcp: dict | None = None) -> dict[str, str]:
    """Every number a page may quote, by name, already written as the page shows it."""
    numbers = {
        "hygiene.inline": f"{hygiene['inline']:,}",
        "hygiene.delegated": f"{hygiene['delegated']:,}",
        "hygiene.ratio": f"{hygiene['delegated'] / hygiene['inline']:.3f}",
        "hygiene.target": f"{constant(ROOT / 'bench' / 'context_hygiene.py', 'TARGET_RATIO'):.2f}",
        "hygiene.files": str(constant(ROOT / "bench" / "context_hygiene.py", "FILES")),
        "parallel.latency": str(constant(ROOT / "bench" / "parallel.py", "LATENCY")),
        "parallel.target": str(constant(ROOT / "bench" / "parallel.py", "TARGET_RATIO")),
        "v3.progress_tick": str(constant(ROOT / "plumbing" / "status.py", "PROGRESS_TICK")),
    }
    numbers.update({f"gistdex.{name}": f"{value:,}" for name, value in GISTDEX.items()})
    for module in sorted((ROOT / "plumbing").glob("*.py")):
        for name, value in number_constants(module).items():
            numbers[f"plumbing.{module.stem}.{name}"] = as_shown(value)
    numbers.update(model_numbers())
    scripted = ROOT / "scripted"
    numbers["api.cache_lookback"] = str(constant(scripted / "server.py", "CACHE_LOOKBACK"))
    numbers["api.max_breakpoints"] = str(constant(scripted / "rules.py", "MAX_BREAKPOINTS"))
    numbers.update(caching_numbers(caching))
    if compaction is not None:
        numbers.update(compaction_numbers(compaction))
    if mcp is not None:
        numbers.update(mcp_numbers(mcp))
    for version, script in SCRIPTS.items():
        if (ROOT / script).exists():
            for name, value in number_constants(ROOT / script).items():
                numbers[f"{version}.{name}"] = as_shown(value)
            source = (ROOT / script).read_text(encoding="utf-8")
            numbers[f"{version}.default_model"] = str(setting_default(ROOT / script, "MODEL_ID"))
            numbers[f"{version}.lines"] = as_shown(len(source.splitlines()))
            numbers[f"{version}.code_lines"] = as_shown(len(code_lines(source)))
            numbers[f"{version}.lesson_code_lines"] = as_shown(lesson_code_lines(source))
    numbers["diff.budget"] = str(constant(ROOT / "tests" / "test_diff_budget.py", "DIFF_BUDGET"))
    numbers.update(count_numbers())
    present = [version for version, script in SCRIPTS.items() if (ROOT / script).exists()]
    for older, newer in itertools.pairwise(present):
        old = (ROOT / SCRIPTS[older]).read_text(encoding="utf-8")
        new = (ROOT / SCRIPTS[newer]).read_text(encoding="utf-8")
        numbers[f"{newer}.changed_lines"] = str(changed_lines(old, new))  # of the version before
    skill_files = [path for path in (ROOT / "skills").rglob("*") if path.is_file()]
    characters = sum(len(path.read_text(encoding="utf-8")) for path in skill_files)
    numbers["skills.characters"] = as_shown(round(characters, -2))  # "about 8,600"
    numbers["hood.first_calls"] = str(FIRST_CALLS)
    for version, transcript in transcripts.items():
        tool_calls = [line for line in transcript.splitlines() if TOOL_CALL.match(line)]
        numbers[f"{version}.demo_calls"] = str(len(main_agent_input(transcript)))
        numbers[f"{version}.demo_tool_calls"] = str(len(tool_calls))
        numbers[f"{version}.demo_task_calls"] = str(
            len([line for line in tool_calls if line.startswith("> Task ")]))
    if (ROOT / SCRIPTS["v5"]).exists():
        numbers.update(compact_at_ceilings(ROOT / SCRIPTS["v5"]))
    if "v5" in transcripts:
        numbers.update(compaction_demo_numbers(transcripts["v5"]))
    if "v4" in transcripts:
        numbers["v4.demo_cache_read"] = CACHE_READ.findall(transcripts["v4"])[-1]
    if "v3" in transcripts:
        first, second = main_agent_input(transcripts["v3"])[:2]
        numbers["v3.demo_input_first"] = f"{first:,}"
        numbers["v3.demo_input_second"] = f"{second:,}"
    if "v1" in transcripts:  # what the first calls send and write: is the first cached?
        numbers["v1.demo_first_input"] = f"{main_agent_input(transcripts['v1'])[0]:,}"
        numbers["v1.demo_first_write"] = f"{cache_writes(transcripts['v1'])[0]:,}"
        numbers["v1.demo_second_write"] = f"{cache_writes(transcripts['v1'])[1]:,}"
        numbers["v1.demo_last_read"] = CACHE_READ.findall(transcripts["v1"])[-1]
    return numbers


def count_numbers() -> dict[str, str]:
    """How many version scripts and workshop exercises there are, counted from the files: a
    sentence that says "six scripts" carries a claim on {{ versions.count }}."""
    present = [script for script in SCRIPTS.values() if (ROOT / script).exists()]
    return {"versions.count": str(len(present)), "workshop.exercises": str(len(EXERCISES))}


MADE_UP_SKILL = "deploy-to-prod"  # the name v4's chapter shows the model making up


def unknown_skill_error(recording: list[dict]) -> str:
    """What v4 answers a Skill call with a name no skill has, checked against the Skill tool as
    the demo's first request sent it (so the enum names the demo's skills, all of them)."""
    tools = json.loads(recording[0]["raw"])["tools"]
    call = ToolUseBlock(id="toolu_made_up", name="Skill", input={"name": MADE_UP_SKILL},
                        type="tool_use")
    try:
        check_tool_call(call, tools)
    except ToolError as error:
        return str(error)
    raise ValueError(f"the Skill tool took the made-up name {MADE_UP_SKILL!r}")


def fill_in(markdown: str, numbers: dict[str, str], page: str) -> str:
    """The page with each `{{ name }}` replaced by its number; a KeyError names what is unknown."""

    def number(match: re.Match) -> str:
        if match[1] not in numbers:
            raise KeyError(f"{page} quotes {{{{ {match[1]} }}}}, which docsgen/numbers.py lacks")
        return numbers[match[1]]

    return PLACEHOLDER.sub(number, markdown)
