"""The mutation runs' own machinery (tests/mutation.py runs by hand, not in CI): what it relies on
to bound a run is checked here, where CI sees it."""

import os
import subprocess
import sys

from scripted import ROOT

def test_a_test_past_the_mutation_runs_limit_ends_its_process_as_mutmuts_timeout(tmp_path):
    """mutmut reads exit code 36 as "timeout"; the quick test before it still passes, and the
    line on stderr names the test that ran out of time."""
    (tmp_path / "test_waits.py").write_text(
        "import threading\n"
        "def test_quick():\n    pass\n"
        "def test_waits():\n    threading.Event().wait(60)\n", encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.mutation_watchdog", "-p", "no:xdist",
         "-p", "no:randomly", "-p", "no:cacheprovider", "-q", str(tmp_path / "test_waits.py"),
         "--rootdir", str(tmp_path)],
        env={**os.environ, "MUTATION_TEST_LIMIT": "0.5", "PYTHONPATH": str(ROOT)},
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 36
    assert "mutation watchdog: test_waits.py::test_waits ran past 0.5 s" in ran.stderr
    assert ran.stdout.startswith(".")  # test_quick passed first
