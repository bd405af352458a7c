"""What a learner runs after the set-up the chapters describe (`pip install -r requirements.txt`
and a copy of .env.example), checked against the files it depends on.

- Every `python bench/NAME.py` a page suggests imports only what requirements.txt installs: the
  benchmarks load the scripts through scripted/loading.py, not through the tests' helpers (which
  need pytest).
- A `--workdir` a page suggests to an agent run is a folder a line before it makes, with a line
  that works in bash, PowerShell and cmd alike (`mkdir play`), or one the reader names (PROJECT).
- .env.example lists every setting a version script reads, each under the versions that read it,
  with the script's default as its value. The settings are found in the code, not listed here:
  `os.environ.get("NAME", ...)`, `os.getenv("NAME")`, `os.environ["NAME"]` and `"NAME" in
  os.environ`, in a script and in every plumbing module it imports, so a new script or setting is
  checked as soon as it exists.
"""

import ast
import functools
import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

from scripted import ROOT

PAGES = [*ROOT.glob("docs_*/*.md"), *ROOT.glob("README*.md"), *ROOT.glob("workshop/**/*.md")]
BENCH_COMMAND = re.compile(r"python3? (bench/\w+\.py)")
# Read from the environment by the operating system's conventions, not set by a reader.
OPERATING_SYSTEM = {"PATH", "PATHEXT", "SYSTEMROOT", "ProgramFiles"}
# "# v3 and later: model calls per subagent." above "# SUBAGENT_MAX_ROUNDS=25"
READERS = re.compile(r"^# (?P<readers>Every version|v\d+ and later|v\d+ only): ")
SETTING = re.compile(r"^#? ?(?P<name>[A-Z][A-Z0-9_]+)=(?P<value>.*)$")


def requirement_names(path: Path) -> set[str]:
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            names.add(re.split(r"[<>=\[ ;]", line)[0].lower().replace("_", "-"))
    return names


def test_the_benchmarks_a_page_suggests_need_only_requirements_txt():
    """Each benchmark is imported (its top level: every import it makes) with the packages that
    only requirements-dev.txt installs made unimportable."""
    suggested = sorted({command for page in PAGES
                        for command in BENCH_COMMAND.findall(page.read_text(encoding="utf-8"))})
    assert len(suggested) >= 4, suggested
    dev_only = requirement_names(ROOT / "requirements-dev.txt") - requirement_names(
        ROOT / "requirements.txt")
    modules = sorted(
        module
        for module, distributions in importlib.metadata.packages_distributions().items()
        if any(name.lower().replace("_", "-") in dev_only for name in distributions)
    )
    assert "pytest" in modules and "mkdocs" in modules
    program = (
        "import importlib.abc, runpy, sys\n"
        f"DEV_ONLY = {set(modules)!r}\n"
        "class DevOnly(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] in DEV_ONLY:\n"
        "            raise ImportError(f'{name} is installed by requirements-dev.txt only')\n"
        "sys.meta_path.insert(0, DevOnly())\n"
        "for bench in sys.argv[1:]:\n"
        "    try:\n"
        "        runpy.run_path(bench, run_name='imported')\n"
        "    except ImportError as error:\n"
        "        print(f'{bench}: {error}')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, *suggested], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )
    assert (done.returncode, done.stdout) == (0, ""), done.stdout + done.stderr


# `python v1_basic.py --workdir play-v1 "..."`, `python -m scripted.record v3 --workdir shop ...`
AGENT_RUN = re.compile(r"python3? (?:v\d+_\w+\.py|-m scripted\.record) .*?--workdir ([\w./~-]+)")
MAKE_FOLDER = re.compile(r"\bmkdir (-p )?([\w./~-]+)")


def test_a_work_directory_a_page_suggests_is_made_first_by_a_line_every_shell_runs():
    wrong = []
    for page in PAGES:
        made: dict[str, bool] = {}  # folder: made with a line every shell runs (no -p)
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for option, folder in MAKE_FOLDER.findall(line):
                made[folder] = not option
            for folder in AGENT_RUN.findall(line):
                where = f"{page.relative_to(ROOT).as_posix()}:{number}: --workdir {folder}"
                if "project" in folder.lower():
                    continue  # the reader's own project, named as a placeholder
                if folder not in made:
                    wrong.append(f"{where}, which no line before it makes")
                elif not made[folder] or folder.startswith("/tmp"):
                    wrong.append(f"{where}, made by a line only a POSIX shell runs")
    assert wrong == []


# -- the settings each script reads --


@functools.cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def is_get(function: ast.expr) -> bool:
    return isinstance(function, ast.Attribute) and function.attr in ("get", "getenv")


def is_environ(value: ast.expr) -> bool:
    return isinstance(value, ast.Attribute) and ast.unparse(value) == "os.environ"


@functools.cache
def environment_reads(path: Path) -> frozenset[str]:
    """The names a file reads from the environment, written as string literals."""
    names = set()
    for node in ast.walk(parsed(path)):
        name = None
        if isinstance(node, ast.Call) and node.args and is_get(node.func):
            if ast.unparse(node.func) in ("os.environ.get", "os.getenv"):
                name = node.args[0]
        elif isinstance(node, ast.Subscript) and is_environ(node.value):
            name = node.slice
        elif isinstance(node, ast.Compare) and is_environ(node.comparators[0]):
            name = node.left
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            names.add(name.value)
    return frozenset(names - OPERATING_SYSTEM)


@functools.cache
def plumbing_imports(path: Path) -> frozenset[Path]:
    """The plumbing modules a file imports itself."""
    return frozenset(
        ROOT / Path(*node.module.split(".")).with_suffix(".py")
        for node in ast.walk(parsed(path))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("plumbing.")
    )


def plumbing_imported(path: Path) -> set[Path]:
    """The plumbing modules a file imports, and those they import in turn."""
    seen, waiting = set(), [path]
    while waiting:
        for module in plumbing_imports(waiting.pop()):
            if module.exists() and module not in seen:
                seen.add(module)
                waiting.append(module)
    return seen


def version_scripts() -> dict[str, Path]:
    """v1_basic.py, v2_planning.py, ...: every version script there is, by version."""
    scripts = {path.name.split("_")[0]: path for path in ROOT.glob("v[0-9]*_*.py")}
    return dict(sorted(scripts.items(), key=lambda item: int(item[0][1:])))


def settings_read() -> dict[str, list[str]]:
    """Each setting, with the versions that read it (in the script or its plumbing)."""
    readers: dict[str, list[str]] = {}
    for version, script in version_scripts().items():
        names = environment_reads(script)
        for module in plumbing_imported(script):
            names |= environment_reads(module)
        for name in names:
            readers.setdefault(name, []).append(version)
    return readers


def settings_listed(text: str, versions: list[str]) -> dict[str, tuple[list[str], str]]:
    """Each setting .env.example lists: the versions it says read it, and its value."""
    listed, said = {}, None
    for line in text.splitlines():
        if match := READERS.match(line):
            said = match["readers"]
        elif (match := SETTING.match(line)) and said:
            if said == "Every version":
                named = versions
            elif said.endswith("only"):
                named = [said.split()[0]]
            else:
                named = versions[versions.index(said.split()[0]):]
            listed[match["name"]] = (named, match["value"])
            said = None
    return listed


def script_default(script: Path, name: str) -> str | None:
    """The default a script gives a setting, `os.environ.get(NAME, default)`, as .env writes it."""
    for node in ast.walk(parsed(script)):
        if isinstance(node, ast.Call) and is_get(node.func):
            if ast.unparse(node.func) != "os.environ.get":
                continue
            if len(node.args) == 2 and getattr(node.args[0], "value", None) == name:
                return str(ast.literal_eval(node.args[1]))
    return None


def test_env_example_lists_every_setting_under_the_versions_that_read_it():
    versions = list(version_scripts())
    listed = settings_listed((ROOT / ".env.example").read_text(encoding="utf-8"), versions)
    read = settings_read()
    assert {"COMPACT_AT", "SUBAGENT_MAX_ROUNDS", "SKILLS_DIR", "MAX_TOKENS"} <= set(read)
    assert sorted(set(read) - set(listed)) == [], "read by a script, missing from .env.example"
    assert sorted(set(listed) - set(read)) == [], "in .env.example, read by no script"
    wrong = {name: (listed[name][0], readers) for name, readers in read.items()
             if listed[name][0] != readers}
    assert wrong == {}, "(.env.example says, the scripts read)"


def test_env_example_shows_each_default_the_scripts_use():
    listed = settings_listed((ROOT / ".env.example").read_text(encoding="utf-8"),
                             list(version_scripts()))
    files = [*version_scripts().values(), *ROOT.glob("plumbing/*.py")]
    differ = {}
    for name, (_, value) in listed.items():
        defaults = {default for path in files if (default := script_default(path, name))}
        if defaults and defaults != {value}:
            differ[name] = (value, sorted(defaults))
    assert differ == {}, "(.env.example shows, the code's default)"
