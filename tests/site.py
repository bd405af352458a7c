"""The built docs site, for the tests that read it (test_docs.py) and open it (test_browser.py).

`built_site` runs the one build command, `python -m docsgen`, once per test run; `served_site`
serves that build over HTTP on 127.0.0.1 under the path it has when published, as GitHub Pages
serves it (/<repository>/ and /<repository>/ja/), missing pages answered by the 404 page.
"""

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

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
        ("ツールハンドラ", "v1/"),
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


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """Run the one build command, strict, both languages, into a folder of this test run's own.

    --offline: a test never fetches. mermaid is in the site only if `python -m docsgen.vendor`
    fetched it before (.ci/run does); the browser tests that need it say so and skip.

    Under pytest-xdist the workers share one build: the first to get here builds while holding a
    lock, the others wait for it and then read the same site. (docsgen swaps each generated file in
    whole, so even two builds at once would not read each other's half-written files.)"""
    for package in ("mkdocs", "material", "pymdownx"):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed (pip install -r requirements-dev.txt)")
    shared = os.environ.get("PYTEST_XDIST_WORKER") and fcntl is not None
    root = tmp_path_factory.getbasetemp().parent if shared else tmp_path_factory.mktemp("docs")
    site = root / "site"
    with open(root / "site.lock", "w") as lock:
        if shared:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (site / "index.html").exists():
            result = subprocess.run(
                [sys.executable, "-m", "docsgen", "--offline", "--site-dir", str(site)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
            )
            assert result.returncode == 0, (
                f"python -m docsgen failed:\n{result.stdout}\n{result.stderr}"
            )
    return site


@pytest.fixture(scope="session")
def served_site(built_site: Path) -> Iterator[str]:
    """The base address of the English site, e.g. http://127.0.0.1:PORT/how-coding-agents-work/."""
    with serving(built_site) as base:
        yield base
