"""A pytest plugin for mutation work only: tests/mutation.py passes `-p tests.mutation_watchdog` to
mutmut's runs and to its own `--recheck`.

mutmut bounds a mutant's run at fifteen times the recorded time of every test that covers it:
for scripted/replay.py, whose recording tests take 200 s together, nearly an hour of waiting on
one mutant that makes a replay wait for ever. Here each test has TEST_LIMIT seconds; past that
its process ends with the exit code mutmut reads as "timeout" (36), which the table counts as
killed, as mutmut's own timeouts are. A timer thread keeps running while the test's thread hangs
or spins in Python code."""

import os
import threading

import pytest

# The slowest test of any target took 51 s on a loaded machine. MUTATION_TEST_LIMIT sets another
# (to see the watchdog work: 1 s, and any test that sleeps longer).
TEST_LIMIT = float(os.environ.get("MUTATION_TEST_LIMIT", "180"))
MUTMUT_TIMEOUT = 36
SAY = os.fdopen(os.dup(2), "w")  # stderr as it was: pytest captures fd 2 while a test runs


def out_of_time(test: str) -> None:
    print(f"\nmutation watchdog: {test} ran past {TEST_LIMIT} s", file=SAY, flush=True)
    os._exit(MUTMUT_TIMEOUT)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    timer = threading.Timer(TEST_LIMIT, out_of_time, args=(item.nodeid,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
