"""The built docs site, for the tests that read it (test_docs.py) and open it (test_browser.py).

`built_site` runs the one build command, `python -m docsgen`, once per test run; `served_site`
serves that build over HTTP on 127.0.0.1 under the path it has when published, as GitHub Pages
serves it (/<repository>/ and /<repository>/ja/), missing pages answered by the 404 page.
"""

import functools
import http.server
import importlib.util
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

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
        ("スクリプト化モデル", "setup/"),
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


def published_root() -> str:
    """The path the English site has when published, e.g. "/how-coding-agents-work/"."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    site_url = next(line for line in config.splitlines() if line.startswith("site_url:"))
    return urlsplit(yaml.safe_load(site_url)["site_url"]).path


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Files of the built site under the published root; anything else gets the 404 page of the
    language its address is in, with status 404, as GitHub Pages answers."""

    def __init__(self, *args, site: Path, root: str, **kwargs) -> None:
        self.site, self.root = site, root
        super().__init__(*args, directory=str(site), **kwargs)

    def translate_path(self, path: str) -> str:
        path = urlsplit(path).path
        if not path.startswith(self.root):
            return str(self.site / "missing")
        return super().translate_path("/" + path[len(self.root) :])

    def send_error(self, code: int, message: str | None = None, explain: str | None = None):
        if code != 404:
            return super().send_error(code, message, explain)
        language = "ja/" if urlsplit(self.path).path.startswith(self.root + "ja/") else ""
        body = (self.site / language / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:
        pass


@pytest.fixture(scope="session")
def served_site(built_site: Path) -> Iterator[str]:
    """The base address of the English site, e.g. http://127.0.0.1:PORT/how-coding-agents-work/."""
    root = published_root()
    handler = functools.partial(SiteHandler, site=built_site, root=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}{root}"
    server.shutdown()
    server.server_close()
