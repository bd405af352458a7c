"""The commands the READMEs show, run as a new user would (installs excepted), so they cannot rot.

Every ```bash and ```powershell block of README.md and README_ja.md is split into commands; venv,
activate and pip steps are skipped (CI has just done them). A version script runs against the
scripted server with a one-turn scenario, in this process: its main(), with the command's
arguments, input and folder (a second interpreter would only import the SDK again; the last test
runs a script as a process of its own). `python -m MODULE` runs the module here too (the demo
still starts v1 as a process of its own). The test command only collects, since this test is
part of the run it would start. Each OS's set-up lines are there, the same on the setup page, and
.github/workflows/tests.yml runs exactly them on that OS.
"""

import contextlib
import importlib.util
import io
import os
import re
import runpy
import shlex
import subprocess
import sys

import pytest
import yaml

from tests.agents import ROOT, run_in_process

INSTALL_STEPS = ("python3 -m venv", "py -m venv", ". .venv/bin/activate", ".venv\\Scripts\\",
                 "pip install")
READMES = ["README.md", "README_ja.md"]
SETUP_PAGES = ["docs_en/setup.md", "docs_ja/setup.md"]
# Each OS's first lines: Python's name there, and where the environment's activation script is
POSIX_SET_UP = ["python3 -m venv .venv", ". .venv/bin/activate", "pip install -r requirements.txt"]
WINDOWS_SET_UP = ["py -m venv .venv", ".venv\\Scripts\\Activate.ps1",
                  "pip install -r requirements.txt"]
WORKFLOW = ROOT / ".github" / "workflows" / "tests.yml"


def code_blocks(name: str, language: str) -> list[list[str]]:
    """The lines of each ```language block of a file, indented ones (in a tab) included."""
    text = (ROOT / name).read_text(encoding="utf-8")
    blocks = re.findall(rf"^( *)```{language}\n(.*?)^\1```", text, flags=re.S | re.M)
    return [[line.strip() for line in body.splitlines() if line.strip()] for _, body in blocks]


def readme_commands() -> list[str]:
    commands = []
    for name in READMES:
        blocks = code_blocks(name, "bash") + code_blocks(name, "powershell")
        for line in [line for block in blocks for line in block]:
            for command in line.split("&&"):
                command = command.strip()
                if (
                    command
                    and not command.startswith(INSTALL_STEPS)
                    and command not in commands
                ):
                    commands.append(command)
    return commands


def test_the_readmes_show_the_two_commands_and_a_real_run():
    commands = readme_commands()
    assert "python -m scripted.demo v1" in commands and "python -m pytest -n auto" in commands
    assert any(command.startswith("python v1_basic.py") for command in commands)


@pytest.mark.parametrize("command", readme_commands())
def test_readme_command_works(command, scripted_api, tmp_path, monkeypatch, capfd):
    argv = [sys.executable if word == "python" else word for word in shlex.split(command)]
    argv = [str(tmp_path) if word.startswith("/path/to/") else word for word in argv]
    if argv[1:3] == ["-m", "pytest"]:
        # Only this file: the configuration, the plugins and the conftest files load all the
        # same, and collecting every test again would cost as much as a worker's start.
        argv += ["--collect-only", "-n", "0", "-q", "tests/test_readme.py"]
    words = [word for word in argv[2:] if not word.startswith("--") and word != str(tmp_path)]
    script = re.fullmatch(r"v\d_\w+\.py", argv[1])
    if script and words:  # a one-shot task: the model answers once
        scripted_api.play({"turns": [{"text": "Hello from the scripted model."}]})
    if script:
        done = run_in_process(ROOT / argv[1], *argv[2:], cwd=ROOT, input_text="q\n")
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        assert ("Hello from the scripted model." in done.stdout) == bool(words), done.stdout
        return
    assert argv[1] == "-m", command  # python -m MODULE: run here, as run_in_process runs a script
    done = run_module_in_process(argv[2], argv[3:], input_text="q\n", monkeypatch=monkeypatch)
    printed = capfd.readouterr()  # what a process the module started printed (the demo's v1)
    assert done.returncode == 0, (
        f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}\n{printed.out[-2000:]}"
    )


def run_module_in_process(module: str, args: list[str], input_text: str, monkeypatch):
    """`python -m MODULE ARGS` in the project folder, in this process: what the interpreter sets
    up for it (sys.argv, the folder first on sys.path, stdin), then the module as __main__. Its
    exit code and what it printed, as subprocess.run gives them."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(sys, "argv", [module, *args])
    monkeypatch.setattr(sys, "path", [str(ROOT), *sys.path])
    monkeypatch.setattr(sys, "stdin", io.StringIO(input_text))
    if importlib.util.find_spec(module).submodule_search_locations is None:
        # a module, not a package: run as a fresh __main__, as a new interpreter runs it (runpy
        # warns when the project's own imports have loaded it already)
        monkeypatch.delitem(sys.modules, module, raising=False)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (exc.code is not None)
    return subprocess.CompletedProcess([module, *args], code, stdout.getvalue(), stderr.getvalue())


@pytest.mark.parametrize("name", READMES + SETUP_PAGES)
def test_each_os_gets_its_own_set_up_lines(name):
    """Linux and macOS: python3, then bin/activate; Windows: py, then Scripts\\Activate.ps1, one
    command a line, as Windows PowerShell 5.1 has no &&."""
    posix = [command.strip() for block in code_blocks(name, "bash") for line in block
             for command in line.split("&&")]
    windows = code_blocks(name, "powershell")
    assert all(line in posix for line in POSIX_SET_UP), posix
    assert any(block[:3] == WINDOWS_SET_UP for block in windows), windows
    assert [line for block in windows for line in block if "&&" in line] == []


@pytest.mark.parametrize("name", ["workshop/README.md", "workshop/README_ja.md"])
def test_the_workshop_guide_names_each_oss_set_up_lines(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    for line in [*POSIX_SET_UP[:2], *WINDOWS_SET_UP[:2]]:
        assert f"`{line}`" in text, line


@pytest.mark.parametrize("name", READMES)
def test_the_windows_lines_are_the_bash_lines_one_a_line(name):
    """The same two commands for every OS, but for the set-up lines that differ."""
    bash = [[command.strip() for command in block[0].split("&&")]
            for block in code_blocks(name, "bash") if len(block) == 1 and "&&" in block[0]]
    windows = code_blocks(name, "powershell")
    assert len(bash) == len(windows) == 2, (bash, windows)
    assert bash[0][2:] == windows[0][2:]  # after the two set-up lines: install, then the demo
    assert bash[1] == windows[1]  # the test command


def workflow_steps(os_name: str) -> list[dict]:
    """The steps of the tests workflow that run on `os_name` (as runner.os names it)."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = []
    for step in workflow["jobs"]["tests"]["steps"]:
        condition = step.get("if", "")
        runs_here = condition in ("", f"runner.os == '{os_name}'") or (
            condition.startswith("runner.os != ") and f"'{os_name}'" not in condition)
        if runs_here and "run" in step:
            steps.append(step)
    return steps


@pytest.mark.parametrize("os_name", ["Linux", "macOS", "Windows"])
def test_the_workflow_runs_the_readmes_lines_on_each_os(os_name):
    steps = workflow_steps(os_name)
    language = "powershell" if os_name == "Windows" else "bash"
    shell = "pwsh" if os_name == "Windows" else "bash"
    assert [step["shell"] for step in steps] == [shell] * len(steps)  # never the runner's default
    runs = [[line.strip() for line in step["run"].splitlines()] for step in steps]
    found = []
    for block in code_blocks("README.md", language):
        if block[-1].endswith(("python -m scripted.demo v1", "python -m pytest -n auto")):
            found.append(next(index for index, lines in enumerate(runs)
                              if contains_in_order(lines, block)))  # StopIteration: not run
    assert len(found) == 2 and found[0] < found[1]  # set-up and demo first, then the tests


def contains_in_order(lines: list[str], block: list[str]) -> bool:
    """Whether the block's lines are there one after the other, as in the README."""
    return any(lines[start:start + len(block)] == block for start in range(len(lines)))


def test_the_workflow_covers_three_oses_and_the_oldest_and_newest_python():
    """The oldest Python is the one the code is written for (ruff's target-version); the setup
    pages name the versions the workflow runs."""
    matrix = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["tests"]["strategy"]
    assert matrix["matrix"]["os"] == ["ubuntu-latest", "macos-latest", "windows-latest"]
    pythons = matrix["matrix"]["python"]
    target = re.search(
        r'target-version = "py3(\d+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pythons[0] == f"3.{target[1]}" and len(pythons) == 2
    for page, joined in zip(SETUP_PAGES, [" and ", " と "], strict=True):
        assert f"Python {joined.join(pythons)}" in (ROOT / page).read_text(encoding="utf-8")


def test_a_copy_of_a_script_elsewhere_runs_with_the_installed_plumbing(scripted_api, tmp_path):
    """The README's first command installs the project (requirements.txt: -e .), so a copy of a
    version script outside the repository, as an attendee or an experiment makes one, imports
    the plumbing package as the original does."""
    mine = tmp_path / "elsewhere" / "mine.py"
    mine.parent.mkdir()
    mine.write_text((ROOT / "v4_skills.py").read_text(encoding="utf-8"), encoding="utf-8")
    scripted_api.play({"turns": [{"text": "Hello from the scripted model."}]})
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": ""}  # nothing but the installed package
    done = subprocess.run(
        [sys.executable, str(mine), "--workdir", str(tmp_path), "say hello"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "Hello from the scripted model." in done.stdout
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert "-e ." in [line.split("#")[0].strip() for line in requirements]
