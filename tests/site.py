"""The built docs site, for the tests that read it (test_docs.py) and open it (test_browser.py).

`built_site` runs the one build command, `python -m docsgen`, once per test run; `served_site`
serves that build over HTTP on 127.0.0.1 under the path it has when published, as GitHub Pages
serves it (/<repository>/ and /<repository>/ja/), missing pages answered by the 404 page.
"""

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from docsgen.serve import serving
from scripted import ROOT

PAGES_EN = sorted(
    path.relative_to(ROOT / "docs_en").as_posix() for path in ROOT.glob("docs_en/*.md")
)

# Search: a term from the glossary, and the page a reader looking it up wants ("" is the home page).
# Japanese terms are typed as Japanese readers type them, compounds without spaces.
SEARCH_CASES = {
    "ja": [
        ("エージェントループ", "v1/"),
        ("エージェントの種類", "v3/"),
        ("許可リスト", "v3/"),
        ("参加者", "workshop/"),
        ("カタログ", "v4/"),
        ("コンテキスト予算", "context-budget/"),
        ("コンテキストの汚染", "v3/"),
        ("コンテキストウィンドウ", "context-budget/"),
        ("委任", "v3/"),
        ("フロントマター", "v4/"),
        ("ハンク", "v2/"),
        ("メインエージェント", "v3/"),
        ("モデル呼び出し", "v1/"),
        ("並列実行", "v3/"),
        ("段階的開示", "v4/"),
        ("プロンプトキャッシュ", "v1/"),
        ("読み取り専用", "v3/"),
        ("模範解答", "workshop/"),
        ("リマインダー", "v2/"),
        ("台本どおりに答えるモデル", "setup/"),
        ("ステータス行", "v3/"),
        ("停止理由", "v1/"),
        ("サブエージェント", "v3/"),
        ("システムプロンプト", "v1/"),
        ("ツール結果", "context-budget/"),
        ("ツールハンドラー", "v1/"),
        ("切り詰め", "context-budget/"),
        ("配管", "v1/"),
        ("実行記録", "v1/"),
        ("ToDo リスト", "v2/"),
    ],
    "en": [
        ("agent loop", "v1/"),
        ("context budget", "context-budget/"),
        ("subagent", "v3/"),
        ("progressive disclosure", "v4/"),
        ("todo list", "v2/"),
        ("read-only", "v3/"),
        ("plumbing", "v1/"),
        ("front matter", "v4/"),
    ],
}

try:
    import fcntl  # POSIX: one docs build shared by the pytest-xdist workers
except ImportError:
    fcntl = None
    import msvcrt  # Windows' lock instead


BUILD_COMMAND = [sys.executable, "-m", "docsgen", "--offline", "--site-dir"]
BUILD_ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def docs_tools_missing() -> str:
    for package in ("mkdocs", "material", "pymdownx"):
        if importlib.util.find_spec(package) is None:
            return f"{package} is not installed (pip install -r requirements-dev.txt)"
    return ""


def pytest_sessionstart(session: pytest.Session) -> None:
    """In the process that runs (or, under pytest-xdist, hands out) the tests: start the docs
    build in the background at once, so it runs beside every other test instead of before the
    first test that needs it. Its output goes to site.log, and site.done says it finished."""
    config = session.config
    if hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker, or a run inside one (the workshop's checks): the build is the run's
    if os.environ.get("AGENT_MUTATION_COPY"):
        return  # a mutation run's copy (tests/mutation.py), where no test builds the site
    if config.rootpath != ROOT or docs_tools_missing():
        return  # a run of another folder (the workshop's pytester runs), or no docs tools
    here = config.invocation_params.dir
    if not any(reads_the_site(here / arg.split("::")[0]) for arg in config.args):
        return  # a run of files that do not read the site (an exercise's checks, for example)
    root = config._tmp_path_factory.getbasetemp()
    build = [sys.executable, "-c", BACKGROUND_BUILD, str(root)]
    config.stash[BACKGROUND] = start_in_background(build, root / "site.log")


def start_in_background(command: list[str], log: Path) -> subprocess.Popen:
    """Start the command in a process group of its own, so that stop_group stops it with every
    process it started; what it prints goes to log."""
    with open(log, "w") as output:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=BUILD_ENV,
            start_new_session=True,
        )


SITE_READERS = ("test_docs", "test_browser", "test_hood", "test_layout", "test_chapters")


def reads_the_site(path: Path) -> bool:
    """Whether a path given on the command line (or in testpaths) may select a test that reads
    the site: one of those files, or a folder that holds one (the project, tests/)."""
    readers = [ROOT / "tests" / f"{name}.py" for name in SITE_READERS]
    path = path.resolve()
    return any(reader == path or path in reader.parents for reader in readers)


BACKGROUND = pytest.StashKey[subprocess.Popen]()
# The build, then site.done with its exit code: a worker waits for that file, not for a process.
BACKGROUND_BUILD = """
import pathlib, subprocess, sys
root = pathlib.Path(sys.argv[1])
code = subprocess.run([sys.executable, "-m", "docsgen", "--offline", "--site-dir",
                       str(root / "site")]).returncode
(root / "site.done").write_text(str(code))
"""


def pytest_sessionfinish(session: pytest.Session) -> None:
    process = session.config.stash.get(BACKGROUND, None)
    if process is not None and process.poll() is None:
        stop_group(process)  # the run ended (or was stopped) before it needed the site


def stop_group(process: subprocess.Popen) -> None:
    """Stop the build and the processes it started (the build runs demos and mkdocs)."""
    if hasattr(os, "killpg"):
        os.killpg(process.pid, signal.SIGKILL)
    else:  # Windows has no process group to signal: the tree below it, as psutil finds it
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(process.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.kill()
        process.kill()
    process.wait()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that read the site run last, so the background build has the most time."""
    items.sort(key=lambda item: "built_site" in getattr(item, "fixturenames", ()))


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The one build command, strict, both languages, into a folder of this test run's own.

    --offline: a test never fetches. mermaid is in the site only if `python -m docsgen.vendor`
    fetched it before (.ci/run does); the browser tests that need it say so and skip.

    The run's controller started the build at session start (pytest_sessionstart): this waits for
    it. Without one (a single process, or a run of other files), the first test here builds it
    while holding a lock, and the others wait for it and read the same site."""
    problem = docs_tools_missing()
    if problem:
        pytest.skip(problem)
    shared = os.environ.get("PYTEST_XDIST_WORKER")
    root = tmp_path_factory.getbasetemp().parent if shared else tmp_path_factory.getbasetemp()
    site = root / "site"
    if (root / "site.log").exists():  # the background build of this run
        deadline = time.monotonic() + 600
        while not (root / "site.done").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        log = (root / "site.log").read_text(encoding="utf-8", errors="replace")
        assert (root / "site.done").read_text() == "0", f"python -m docsgen failed:\n{log}"
        return site
    with open(root / "site.lock", "w") as lock:
        if shared:  # one build at a time: two would replace files in .generated/ the other reads
            lock_to_the_end(lock)
        if not (site / "index.html").exists():
            result = subprocess.run(
                [*BUILD_COMMAND, str(site)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                env=BUILD_ENV,
            )
            assert result.returncode == 0, (
                f"python -m docsgen failed:\n{result.stdout}\n{result.stderr}"
            )
    return site


def lock_to_the_end(lock) -> None:
    """Wait for a lock on the open file, held until it closes: flock on POSIX; on Windows,
    msvcrt's lock of its first byte, which gives up after 10 tries a second apart, so it is
    asked again."""
    if fcntl is not None:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return
    while True:
        try:
            msvcrt.locking(lock.fileno(), msvcrt.LK_LOCK, 1)
            return
        except OSError:
            continue  # another worker is building: its build takes longer than 10 s


@pytest.fixture(scope="session")
def served_site(built_site: Path) -> Iterator[str]:
    """The base address of the English site, e.g. http://127.0.0.1:PORT/how-coding-agents-work/."""
    with serving(built_site) as base:
        yield base


@pytest.fixture(scope="session")
def browser() -> Iterator:
    """Headless Chromium (Debian's package), driven by Playwright, offline: one per test process,
    for tests/test_browser.py and tests/test_layout.py (a launch costs half a second of CPU)."""
    playwright_api = pytest.importorskip(
        "playwright.sync_api",
        reason="Playwright is not installed (pip install -r requirements-dev.txt)",
    )
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium here (Debian: apt-get install chromium; .ci/run installs it)")
    with socket.socket() as nowhere, playwright_api.sync_playwright() as playwright:
        nowhere.bind(("127.0.0.1", 0))  # a port of ours that never listens: connections fail
        proxy = {"server": f"http://127.0.0.1:{nowhere.getsockname()[1]}", "bypass": "127.0.0.1"}
        try:  # the served site, on 127.0.0.1, is reached directly
            launched = playwright.chromium.launch(executable_path=chromium, proxy=proxy)
        except playwright_api.Error as error:
            pytest.skip(f"Chromium does not start here: {str(error).splitlines()[0]}")
        yield launched
        launched.close()
