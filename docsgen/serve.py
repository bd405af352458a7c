"""Serve a built site on 127.0.0.1 under the path it is published at, as GitHub Pages does.

The tests open the site this way (tests/site.py), and so does `python -m docsgen.screenshots`.
Anything missing gets the 404 page of the language its address is in, with status 404.
"""

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from scripted import ROOT

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


@contextlib.contextmanager
def serving(site: Path) -> Iterator[str]:
    """Serve the site in a thread; yields the English site's address, e.g.
    http://127.0.0.1:PORT/how-coding-agents-work/ (the Japanese one adds ja/)."""
    root = published_root()
    handler = functools.partial(SiteHandler, site=site, root=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{root}"
    finally:
        server.shutdown()
        server.server_close()
