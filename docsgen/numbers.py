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
import re
import subprocess
import sys
from pathlib import Path

from anthropic.types import ToolUseBlock

from docsgen.charts import GISTDEX
from docsgen.hood import FIRST_CALLS
from plumbing.checks import ToolError, check_tool_call
from scripted import ROOT, SCRIPTS
from scripted.models import MODELS

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


def benchmark_figures(program: str = BENCHMARKS) -> dict:
    """bench/context_hygiene.py's sizes ("hygiene": the largest main-agent request, inline and
    delegated), bench/caching.py's figures ("caching": a v1 session's input tokens, read
    from the cache and at most) and bench/compaction.py's ("compaction": one long session
    played three ways; "compaction_table": the table it prints), as each gives them with
    --json. `program` runs from the project's root and prints them as one JSON object."""
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the benchmarks failed:\n{done.stderr}")
    return json.loads(done.stdout)


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
    """{{ compaction.<way>.<figure> }} for each way the session was played, and the benchmark's
    settings ({{ compaction.WINDOW }}, ...)."""
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
    numbers["compaction.saved_share"] = (
        f"{1 - figures['compaction']['billed'] / figures['clearing']['billed']:.0%}")
    return numbers


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
        "v5.demo_summary_call": str(before),  # its number in "Under the hood"
    }


def page_numbers(hygiene: dict, transcripts: dict[str, str], caching: dict,
                 compaction: dict | None = None) -> dict[str, str]:
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
