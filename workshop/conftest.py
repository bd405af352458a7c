"""Fixtures for the workshop exercises: the same scripted API as tests/, and the script under test.

    # your script
    python -m pytest workshop/01-search-tool --solution workshop/01-search-tool/mine.py
    # the reference
    python -m pytest workshop/01-search-tool

Without --solution, an exercise's tests run against its reference solution: the version script it
extends with the exercise's solution.diff applied, built once per session in a temporary folder.
"""

from pathlib import Path

import pytest

from workshop.reference import EXERCISES, build_reference

def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--solution",
        metavar="SCRIPT",
        help="workshop: run one exercise's tests against this script "
        "of yours (default: the exercise's reference solution)",
    )


def pytest_configure(config: pytest.Config) -> None:
    given = config.getoption("solution")
    if given and not (config.invocation_params.dir / given).is_file():
        raise pytest.UsageError(
            f"--solution {given}: there is no such file. Start from a copy of the version "
            "script the exercise extends; its README.md says which."
        )
    if given and config.getoption("log_level") is None:
        # The scripts log every SDK request at DEBUG (to show retries); in a failure report
        # those pages of JSON would bury the one line that says which rule is not met yet.
        config.option.log_level = "WARNING"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    exercises = {
        item.path.parent.name for item in items if item.path.parent.parent.name == "workshop"
    }
    if config.getoption("solution") and len(exercises) > 1:
        raise pytest.UsageError(
            f"--solution is one script, so name one exercise folder, e.g. "
            f"python -m pytest workshop/{min(exercises)} --solution ..."
        )


@pytest.fixture(scope="session")
def references() -> dict[str, Path]:
    return {}  # exercise folder: its reference solution, built when a test first needs it


@pytest.fixture
def script_path(request: pytest.FixtureRequest, references: dict, tmp_path_factory) -> Path:
    """The script under test: the one given with --solution, or the reference solution of this
    exercise."""
    if given := request.config.getoption("solution"):
        return (request.config.invocation_params.dir / given).resolve()
    exercise = request.path.parent.name
    if exercise not in references:
        assert exercise in EXERCISES, (
            f"{exercise} is missing from EXERCISES in workshop/reference.py"
        )
        references[exercise] = build_reference(exercise, tmp_path_factory.mktemp(exercise))
    return references[exercise]
