"""The pages' generated material: script sections, diffs between versions, demo transcripts.

Nobody writes these by hand. `python -m docsgen` makes them from the real files
before every build, so a page can never show a stale copy, and writes them to
.generated/ (git-ignored), which pymdownx.snippets searches beside the
repository root:

    --8<-- "sections/v1_basic/loop.py"   one section of v1_basic.py (see below)
    --8<-- "diffs/v1-to-v2.diff"         unified diff of v1_basic.py -> v2_planning.py
    --8<-- "transcripts/v1.txt"          what `python -m scripted.demo v1` prints
    {{ hygiene.delegated }}              a number (numbers.json; see docsgen/numbers.py)
    --8<-- "hood/en/v1.html"             every model call of that demo run (docsgen/hood.py)
    --8<-- "changes/en/v1-to-v2.html"    the "What changed" card above a diff (docsgen/changes.py)
    --8<-- "charts/en/gistdex.html"      a chart, drawn as SVG (docsgen/charts.py)
    --8<-- "bench/compaction.txt"        what `python bench/compaction.py` prints
    --8<-- "endpoints/en/table.md"       the endpoint table (docsgen/endpoints.py)

A section of a script starts at a heading comment such as
`# -- loop -- the agent loop` and runs to the next one (the last, to the end of
the file). The heading itself is left out: the page has its own. One line per
section, and no end marker, keeps the scripts as short as their code.

Only what can exist is made: a diff for each consecutive pair whose two
scripts exist, a transcript for each version whose script and demo scenario
exist. A page that includes anything else fails the build, because snippets
runs with check_paths: true.
"""

import difflib
import itertools
import json
import os
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from docsgen.changes import card_files, served_tools, what_changed
from docsgen.charts import chart_files
from docsgen.endpoints import endpoint_files, endpoint_numbers
from docsgen.hood import MAIN_TRACK, hide_folder, hood_files, load_recording
from docsgen.numbers import (
    BENCHMARKS,
    MCP_BENCHMARK,
    benchmark_figures,
    page_numbers,
    unknown_skill_error,
)
from scripted import ROOT
from scripted import SCRIPTS as VERSIONS
from scripted.demo import SCENARIOS, run_demo
from scripted.warm import WarmPython

GENERATED = ROOT / ".generated"
NUMBERS = GENERATED / "numbers.json"  # what the pages quote as {{ name }}: docsgen/numbers.py
# `# -- loop -- the agent loop` starts the section "loop"; `# -- plumbing/files -- ...` starts
# "plumbing/files", a part of the plumbing, written to sections/<script>/plumbing/files.py
SECTION_HEADING = re.compile(r"^# -- ([a-z_]+(?:/[a-z_]+)?) -- ")


# -- sections of the scripts ------------------------------------------------------


def script_sections(script: Path) -> dict[str, str]:
    """Each section of a script by name: the lines after its heading, up to the next heading, blank
    ends trimmed."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in script.read_text(encoding="utf-8").splitlines():
        if heading := SECTION_HEADING.match(line):
            current = heading[1]
            if current in sections:
                raise ValueError(f"{script.name} has two sections named {current!r}")
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return {name: "\n".join(lines).strip("\n") + "\n" for name, lines in sections.items()}


def section_first_lines(script: Path) -> dict[str, int]:
    """The line number in the script of each section's first line as shown (blank lines after its
    heading are trimmed), so a page can number the lines as the file does."""
    first_lines = {}
    current = None
    for number, line in enumerate(script.read_text(encoding="utf-8").splitlines(), start=1):
        if heading := SECTION_HEADING.match(line):
            current = heading[1]
        elif current is not None and current not in first_lines and line.strip():
            first_lines[current] = number
    return first_lines


def section_path(script: str, name: str) -> Path:
    return GENERATED / "sections" / Path(script).stem / f"{name}.py"


# -- diffs between consecutive versions ---------------------------------------


def version_diff(old: Path, new: Path) -> str:
    """The unified diff a reader would get from `diff -u old new`."""
    return "".join(
        difflib.unified_diff(
            old.read_text(encoding="utf-8").splitlines(keepends=True),
            new.read_text(encoding="utf-8").splitlines(keepends=True),
            fromfile=old.name,
            tofile=new.name,
        )
    )


def diff_pairs() -> list[tuple[str, str]]:
    """Consecutive versions whose two scripts both exist, e.g. [("v1", "v2")]."""
    names = list(VERSIONS)
    return [
        (old, new)
        for old, new in zip(names, names[1:], strict=False)
        if (ROOT / VERSIONS[old]).exists() and (ROOT / VERSIONS[new]).exists()
    ]


def diff_path(old: str, new: str) -> Path:
    return GENERATED / "diffs" / f"{old}-to-{new}.diff"


# -- transcripts of the offline demo -------------------------------------------


def demo_transcript(version: str, record: Path | None = None,
                    python: WarmPython | None = None) -> str:
    """Run the offline demo and return what a terminal would show, command line included, made
    the same on every build (see steady). With record, the demo also saves there every request
    it got and the reply (for docsgen/hood.py). The demo runs here, in a thread (a Python process
    for each only imported the scripted server again); its script runs as a process, as always,
    started by python (scripted/warm.py), a new interpreter if None."""
    with tempfile.TemporaryDirectory(prefix=f"agent-demo-{version}-") as workdir:
        with tempfile.TemporaryDirectory(prefix=f"docsgen-demo-{version}-") as folder:
            shown = Path(folder) / "shown.txt"
            with open(shown, "a", encoding="utf-8", newline="") as output:
                code = run_demo(version, Path(workdir), record, output=output, timeout=300,
                                python=python)
            text = shown.read_text(encoding="utf-8")
    if code != 0:
        raise RuntimeError(f"`python -m scripted.demo {version}` exited with {code}:\n{text}")
    output = text.replace(str(Path(workdir).resolve()), f"/tmp/agent-demo-{version}")
    call_order = []
    if record:
        hide_folder(record, str(Path(workdir).resolve()))
        recording = in_model_order(json.loads(record.read_text(encoding="utf-8")))
        record.write_text(json.dumps(recording, ensure_ascii=False), encoding="utf-8")
        call_order = task_call_order(recording)
    return f"$ python -m scripted.demo {version}\n{steady(output, call_order)}"


def task_call_order(recording: list[dict]) -> list[str]:
    """The descriptions of the Task calls, in the order the model made them (its replies, in
    the order they were sent): the transcript shows parallel calls in that order."""
    descriptions = []
    for exchange in recording:
        body = exchange["reply"].get("body") or {}
        for block in body.get("content", []):
            if block.get("type") == "tool_use" and block.get("name") == "Task":
                descriptions.append(str(block["input"].get("description", "")))
    return descriptions


def in_model_order(recording: list[dict]) -> list[dict]:
    """The exchanges in an order no thread decides: the main agent's as it sent them, and
    between two of them the subagents' requests, which arrive interleaved as their threads run,
    grouped by subagent in the order the model made their Task calls (each subagent's own in the
    order it sent them). A subagent is known by its first message, the prompt of its Task call."""
    prompts = []
    for exchange in recording:
        body = exchange["reply"].get("body") or {}
        for block in body.get("content", []):
            if block.get("type") == "tool_use" and block.get("name") == "Task":
                prompts.append(str(block["input"].get("prompt", "")))

    def made_at(exchange: dict) -> int:
        first = json.loads(exchange["raw"])["messages"][0]["content"]
        text = first if isinstance(first, str) else "".join(
            block.get("text", "") for block in first if isinstance(block, dict))
        return prompts.index(text) if text in prompts else len(prompts)

    ordered, run = [], []
    for exchange in recording:
        if exchange["track"] != MAIN_TRACK:
            run.append(exchange)
            continue
        ordered += sorted(run, key=made_at) + [exchange]  # sorted() keeps each one's own order
        run = []
    return ordered + sorted(run, key=made_at)


# A subagent's status line ends with its tool count and time: `done (2 tools, 0.4 s)`.
ELAPSED = re.compile(r"(\(\d+ tools?), \d+\.\d s\)")
# The lines the threads of parallel subagents print as they start: their Task call and status line.
STARTING = re.compile(r"^(> Task |\[\w+\] .* … started$)")
# What keeps read_only_bash read-only depends on the machine: sandbox.note_read_only_protection().
MACHINE_NOTE = re.compile(r"^\[read_only_bash: read-only is enforced by ")


def steady(output: str, call_order: list[str] | None = None) -> str:
    """The demo's output, the same on every run, so two builds make the same pages. Three things
    vary with the machine and are evened out: the random work folder (replaced by the caller), a
    subagent's time (shown as n.n s), and the order in which parallel subagents' threads print
    their first two lines (put in the order the model made the calls, `call_order` by
    description: each Task call, then its status line). A machine-dependent start-up note (what
    keeps read-only commands read-only here) is left out: the pages show the same transcript
    wherever they are built."""
    lines = [ELAPSED.sub(r"\1, n.n s)", line) for line in output.splitlines()]
    lines = [line for line in lines if not MACHINE_NOTE.match(line)]
    steady_lines = []
    while lines:
        run = list(itertools.takewhile(lambda line: STARTING.match(line), lines))
        if not run:
            steady_lines.append(lines.pop(0))
            continue
        del lines[: len(run)]
        order = call_order or []
        steady_lines += sorted(run, key=lambda line: (starting_order(line, run, order), line))
    return "\n".join(steady_lines) + "\n"


def starting_order(line: str, run: list[str], call_order: list[str]) -> int:
    """Where a line goes among the starting lines: Task calls in the model's order (by text where
    it is not known), each status line right after the call with its description."""
    calls = sorted(
        (other for other in run if other.startswith("> Task ")),
        key=lambda call: (model_position(call, call_order), call),
    )
    for number, call in enumerate(calls):
        description = re.search(r'"description": "([^"]*)"', call)
        if line == call:
            return 2 * number
        if description and line.split("] ", 1)[-1].startswith(description[1]):
            return 2 * number + 1
    return 2 * len(calls)


def model_position(call: str, call_order: list[str]) -> int:
    description = re.search(r'"description": "([^"]*)"', call)
    for position, made in enumerate(call_order):
        if description and made.startswith(description[1]):
            return position
    return len(call_order)


def demo_versions() -> list[str]:
    """Versions whose script and demo scenario both exist (and the demo itself)."""
    if not (ROOT / "scripted" / "demo.py").exists():
        return []  # then only a page that includes a transcript fails, naming the missing file
    return [
        version
        for version, script in VERSIONS.items()
        if (ROOT / script).exists() and (SCENARIOS / f"{version}_demo.yaml").exists()
    ]


def transcript_path(version: str) -> Path:
    return GENERATED / "transcripts" / f"{version}.txt"


# -- writing .generated/ ----------------------------------------------------------


def expected_files() -> dict[Path, str]:
    """Every generated file with the content it must have now."""
    files = {}
    for script in VERSIONS.values():
        if (ROOT / script).exists():
            for name, code in script_sections(ROOT / script).items():
                files[section_path(script, name)] = code
    made = {}  # by path under .generated/
    changes = {}  # by pair of versions, for the "What changed" cards, made once the demos ran
    for old, new in diff_pairs():
        old_file, new_file = ROOT / VERSIONS[old], ROOT / VERSIONS[new]
        diff = files[diff_path(old, new)] = version_diff(old_file, new_file)
        sections = [list(script_sections(path)) for path in (old_file, new_file)]
        changes[old, new] = what_changed(old_file, new_file, sections, diff)
    versions = demo_versions()
    # Each demo, and the benchmark the pages quote, is a separate process: they run side by side.
    # One run of each demo makes its transcript and, recorded, its "Under the hood" pages.
    # Their Python processes start from one that imported the SDK once (scripted/warm.py).
    with (tempfile.TemporaryDirectory(prefix="docsgen-") as folder, WarmPython() as python,
          ThreadPoolExecutor() as pool):
        benchmarks = pool.submit(benchmark_figures, BENCHMARKS, python)
        mcp_benchmark = pool.submit(benchmark_figures, MCP_BENCHMARK, python)
        records = {version: Path(folder) / f"{version}.json" for version in versions}
        runs = pool.map(demo_transcript, versions, records.values(), [python] * len(versions))
        transcripts = dict(zip(versions, runs, strict=True))
        recordings = {version: load_recording(path) for version, path in records.items()}
    made.update(hood_files(recordings))
    for (old, new), changed in changes.items():
        if old in recordings and new in recordings:  # tools a server offered at run time (v6)
            changed.served = served_tools(recordings[old], recordings[new], changed)
        made.update(card_files(old, new, changed))
    for version, transcript in transcripts.items():
        files[transcript_path(version)] = transcript
    figures = benchmarks.result() | mcp_benchmark.result()
    numbers = page_numbers(figures["hygiene"], transcripts, figures["caching"],
                           figures["compaction"], figures["mcp"])
    files[GENERATED / "bench" / "compaction.txt"] = figures["compaction_table"]
    files[GENERATED / "bench" / "mcp_budget.txt"] = figures["mcp_table"]
    for script in VERSIONS.values():
        if (ROOT / script).exists():
            for name, first in section_first_lines(ROOT / script).items():
                numbers[f"lines.{Path(script).stem}/{name}"] = str(first)
    numbers.update(endpoint_numbers())
    if "v4" in recordings:
        numbers["v4.unknown_skill_error"] = unknown_skill_error(recordings["v4"])
    files[NUMBERS] = json.dumps(numbers, indent=2) + "\n"
    made.update(chart_files(figures["hygiene"]))
    made.update(endpoint_files())
    files.update({GENERATED / path: text for path, text in made.items()})
    return files


def write_all() -> None:
    """Make .generated/ hold exactly the files expected now, and nothing else."""
    files = expected_files()
    for path in GENERATED.rglob("*"):
        if path.is_file() and path not in files and not path.name.endswith(".partial"):
            path.unlink(missing_ok=True)  # e.g. a diff for a pair that no longer exists
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written beside, then swapped in: a build running at the same time (the tests run in
        # parallel) reads
        # the old file or the new one, never half of one. newline="": "\n" on Windows too, so a diff
        # stays
        # byte for byte what difflib made.
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.write_text(text, encoding="utf-8", newline="")
        partial.replace(path)
