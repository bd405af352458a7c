"""The commands the READMEs show, run as a new user would (installs excepted), so they cannot rot.

Every ```bash block of README.md and README_ja.md is split into commands; venv, activate and pip
steps are skipped (CI has just done them). A version script runs against the scripted server with a
one-turn scenario, in this process: its main(), with the command's arguments, input and folder (a
second interpreter would only import the SDK again; the last test runs a script as a process of
its own). The test command only collects, since this test is part of the run it would
start. """

import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.agents import ROOT, run_in_process

INSTALL_STEPS = ("python -m venv", "py -m venv", ". .venv/bin/activate", "pip install")


def readme_commands() -> list[str]:
    commands = []
    for name in ("README.md", "README_ja.md"):
        for block in re.findall(
            r"```bash\n(.*?)```", (ROOT / name).read_text(encoding="utf-8"), flags=re.S
        ):
            for line in block.splitlines():
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
def test_readme_command_works(command, scripted_api, tmp_path):
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
    done = subprocess.run(
        argv,
        cwd=ROOT,
        input="q\n",
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


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
