"""The site's tools in the test's own process: serving a build (docsgen/serve.py), fetching the
pinned mermaid (docsgen/vendor.py), the mkdocs hooks (docsgen/hooks.py), the build command
(docsgen/__main__.py) and the screenshot command's checks (docsgen/screenshots.py).

The tests that use them otherwise open the built site in a browser, or build it in a child
process; a mutation run leaves those out (a docs build per mutant), so it saw no test reach this
code. Here a tiny site, a tiny tarball and a tiny page stand in for the real ones, and the heavy
steps of a build (the demos, the two mkdocs builds) are replaced by recorders, so what the build
command decides is seen: which steps run, in which order, into which folders, and what it says
when one fails.
"""

import base64
import contextlib
import functools
import hashlib
import http.server
import io
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mkdocs.config import load_config
from mkdocs.exceptions import Abort, MkDocsException, PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from pymdownx.snippets import SnippetMissingError

import docsgen.__main__ as build_command
from docsgen import hooks, screenshots, vendor
from docsgen.serve import published_root, serving
from scripted import ROOT

# -- serving a build --


@pytest.fixture
def small_site(tmp_path: Path) -> Path:
    """A built site in small: the two home pages, a page, and each language's 404 page."""
    files = {"index.html": "home", "v1/index.html": "v1 page", "404.html": "English 404",
             "ja/index.html": "ホーム", "ja/404.html": "日本語の 404"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def fetch(address: str, method: str = "GET", headers: dict | None = None
          ) -> tuple[int, str, dict]:
    request = urllib.request.Request(address, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode("utf-8"), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8"), dict(error.headers)


def test_the_published_root_is_the_path_of_mkdocs_site_url():
    assert published_root() == "/how-coding-agents-work/"


def test_a_served_site_answers_under_its_published_path_and_404s_in_the_addresss_language(
        small_site, capfd):
    with serving(small_site) as base:
        host = base.removesuffix("/how-coding-agents-work/")
        assert base.startswith("http://127.0.0.1:") and host.rsplit(":", 1)[1].isdigit()
        assert fetch(base)[:2] == (200, "home")
        assert fetch(base + "v1/")[:2] == (200, "v1 page")
        assert fetch(base + "v1/?q=loop")[:2] == (200, "v1 page")
        assert fetch(base + "ja/")[:2] == (200, "ホーム")
        status, body, headers = fetch(base + "no-such-page/")
        assert (status, body) == (404, "English 404")
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        assert headers["Content-Length"] == str(len(body.encode("utf-8")))
        assert fetch(base + "ja/no-such-page/?q=1")[:2] == (404, "日本語の 404")
        assert fetch(host + "/ja/")[:2] == (404, "English 404")  # outside the published path
        assert fetch(host + "/index.html")[:2] == (404, "English 404")
        try:  # other errors are the server's own, in its own words
            urllib.request.urlopen(urllib.request.Request(base, method="POST"), timeout=10)
        except urllib.error.HTTPError as error:
            assert (error.code, error.reason) == (501, "Unsupported method ('POST')")
        status, body, _ = fetch(base, headers={"X-Long": "x" * 70_000})
        assert status == 431  # and its explanation, which the 404 page has no room for
        assert "got more than 65536 bytes when reading header line" in body
    assert capfd.readouterr().err == ""  # no line per request
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(base, timeout=5)  # stopped with the block


# -- the pinned mermaid --


def tarball(files: dict[str, bytes]) -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        for name, content in files.items():
            member = tarfile.TarInfo(name)
            member.size = len(content)
            archive.addfile(member, io.BytesIO(content))
    return data.getvalue()


@contextlib.contextmanager
def registry(files: dict[str, bytes]):
    """An npm registry on 127.0.0.1 that serves these paths; yields its address and the paths
    asked for."""
    asked = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            asked.append(self.path)
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, format, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", asked
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def vendor_folder(tmp_path, monkeypatch) -> Path:
    """vendor.py's folder moved here, so a test never writes the project's .vendor/."""
    folder = tmp_path / ".vendor" / "mermaid"  # .vendor/ not there yet, as in a fresh clone
    monkeypatch.setattr(vendor, "VENDOR", folder)
    monkeypatch.setattr(vendor, "MERMAID_JS", folder / "mermaid.min.js")
    return folder


PACKAGE = {"package/LICENSE": b"MIT, the mermaid authors",
           "package/dist/mermaid.min.js": b"window.mermaid = {};",
           "package/README.md": b"not kept"}
TARBALL_PATH = f"/mermaid/-/mermaid-{vendor.MERMAID_VERSION}.tgz"


def test_the_tarball_comes_from_the_npm_registry_or_the_one_set(monkeypatch):
    monkeypatch.delenv("npm_config_registry", raising=False)
    assert vendor.tarball_url() == (
        "https://registry.npmjs.org/mermaid/-/mermaid-11.12.3.tgz")
    monkeypatch.setenv("npm_config_registry", "http://mirror.example/npm/")
    assert vendor.tarball_url() == "http://mirror.example/npm/mermaid/-/mermaid-11.12.3.tgz"
    monkeypatch.setenv("npm_config_registry", "")
    assert vendor.tarball_url().startswith("https://registry.npmjs.org/mermaid/")
    # only the slash goes: a mirror's own path is kept to its last letter
    monkeypatch.setenv("npm_config_registry", "http://mirror.example/npm-X/")
    assert vendor.tarball_url() == "http://mirror.example/npm-X/mermaid/-/mermaid-11.12.3.tgz"


def test_the_integrity_string_is_npms():
    data = b"mermaid"
    assert vendor.integrity_of(data) == "sha512-" + base64.b64encode(
        hashlib.sha512(data).digest()).decode()
    assert vendor.integrity_of(b"") == (
        "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==")


def test_mermaid_is_fetched_once_checked_and_only_its_two_files_kept(vendor_folder, monkeypatch):
    data = tarball(PACKAGE)
    monkeypatch.setattr(vendor, "MERMAID_INTEGRITY", vendor.integrity_of(data))
    with registry({TARBALL_PATH: data}) as (address, asked):
        monkeypatch.setenv("npm_config_registry", address)
        vendor.fetch_mermaid()
        assert sorted(path.name for path in vendor_folder.iterdir()) == [
            "LICENSE", "mermaid.min.js"]
        assert (vendor_folder / "LICENSE").read_bytes() == PACKAGE["package/LICENSE"]
        assert (vendor_folder / "mermaid.min.js").read_bytes() == PACKAGE[
            "package/dist/mermaid.min.js"]
        vendor.fetch_mermaid()  # there already: nothing fetched
        assert asked == [TARBALL_PATH]


def test_a_fetch_cut_off_before_mermaid_min_js_is_finished_the_next_time(
        vendor_folder, monkeypatch):
    data = tarball(PACKAGE)
    monkeypatch.setattr(vendor, "MERMAID_INTEGRITY", vendor.integrity_of(data))
    vendor_folder.mkdir(parents=True)  # the LICENSE came, then the fetch was stopped
    (vendor_folder / "LICENSE").write_bytes(PACKAGE["package/LICENSE"])
    (vendor_folder / ".mermaid.min.js.partial").write_bytes(b"window.merm")
    with registry({TARBALL_PATH: data}) as (address, asked):
        monkeypatch.setenv("npm_config_registry", address)
        vendor.fetch_mermaid()
    assert asked == [TARBALL_PATH]
    assert (vendor_folder / "mermaid.min.js").read_bytes() == PACKAGE[
        "package/dist/mermaid.min.js"]


def test_a_tarball_that_does_not_match_the_pin_is_refused_and_nothing_kept(
        vendor_folder, monkeypatch):
    with registry({TARBALL_PATH: tarball(PACKAGE)}) as (address, _):
        monkeypatch.setenv("npm_config_registry", address)
        with pytest.raises(vendor.VendorError) as refused:
            vendor.fetch_mermaid()
    assert str(refused.value) == (
        f"{address}mermaid/-/mermaid-11.12.3.tgz does not match the pinned hash "
        f"{vendor.MERMAID_INTEGRITY}")
    assert not vendor_folder.exists()


def test_a_registry_out_of_reach_is_one_line_that_says_what_to_set(
        vendor_folder, monkeypatch, capsys):
    with registry({}) as (address, _):
        pass  # stopped: nothing listens there now
    monkeypatch.setenv("npm_config_registry", address)
    with pytest.raises(vendor.VendorError) as failed:
        vendor.fetch_mermaid()
    message = str(failed.value)
    assert message.startswith(
        f"could not fetch mermaid 11.12.3 from {address}mermaid/-/mermaid-11.12.3.tgz (")
    assert message.endswith(
        "); the diagrams need it. Check access to the npm registry (or set npm_config_registry "
        "to a mirror).")
    assert failed.value.__suppress_context__
    assert vendor.main() == 1
    assert capsys.readouterr().err == f"docsgen.vendor: {message}\n"


def test_a_registry_is_given_two_minutes_to_answer_then_given_up_on(
        vendor_folder, monkeypatch):
    waits = []  # the deadline each connection is opened with, seen on its way to the socket
    create_connection = socket.create_connection

    def connect(address, timeout, *rest):
        waits.append(timeout)
        return create_connection(address, timeout, *rest)

    monkeypatch.setattr(socket, "create_connection", connect)
    with registry({}) as (address, _):
        monkeypatch.setenv("npm_config_registry", address)
        with pytest.raises(vendor.VendorError):
            vendor.fetch_mermaid()
    assert waits == [120]


def test_python_m_docsgen_vendor_says_where_the_copy_is(monkeypatch, capsys):
    monkeypatch.setattr(vendor, "MERMAID_JS", ROOT / "mkdocs.yml")  # a file that is there
    assert vendor.main() == 0
    assert capsys.readouterr().out == "mermaid 11.12.3: mkdocs.yml\n"


# -- the mkdocs hooks --


def test_a_plain_mkdocs_build_is_refused_and_serve_is_not(monkeypatch):
    monkeypatch.delenv(hooks.BUILT_BY_DOCSGEN, raising=False)
    for command in ("build", "gh-deploy"):
        with pytest.raises(Abort, match=r"^build the site with `python -m docsgen`: it makes the"
                                        r" generated pages first and builds both languages \(a "
                                        r"plain `mkdocs build` would delete site/ja\)$"):
            hooks.on_startup(command, dirty=False)
    assert hooks.on_startup("serve", dirty=False) is None
    monkeypatch.setenv(hooks.BUILT_BY_DOCSGEN, "1")
    assert hooks.on_startup("build", dirty=False) is None


@functools.cache
def config_text(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def config_of(name: str):
    return load_config(str(ROOT / name))


@pytest.mark.parametrize("mermaid", [True, False])
def test_the_japanese_site_lives_under_the_english_one_and_links_both(
        mermaid, tmp_path, monkeypatch):
    script = tmp_path / "mermaid.min.js"
    if mermaid:
        script.write_text("window.mermaid = {};", encoding="utf-8")
    monkeypatch.setattr(hooks, "MERMAID_JS", script)
    english = hooks.on_config(config_of("mkdocs.yml"))
    japanese = hooks.on_config(config_of("mkdocs.ja.yml"))
    root = "https://how-coding-agents-work.github.io/how-coding-agents-work/"
    assert english.site_url == root and japanese.site_url == root + "ja/"
    assert english.edit_uri == "edit/main/docs_en/"
    assert japanese.edit_uri == "edit/main/docs_ja/"
    for config in (english, japanese):
        assert [(alternate["lang"], alternate["url"]) for alternate in
                config.extra["alternate"]] == [("en", root), ("ja", root + "ja/")]
        assert config.extra.get("mermaid_url") == (
            "assets/javascripts/mermaid.min.js" if mermaid else None)
    japanese.plugins._current_plugin = "hooks"  # as mkdocs sets it around a plugin's event
    files = hooks.on_files(Files([]), japanese)
    if mermaid:
        [added] = files
        assert added.src_uri == "assets/javascripts/mermaid.min.js"
        assert added.abs_src_path == str(script)
    else:
        assert list(files) == []


def test_japanese_search_splits_the_compounds_its_pages_use_and_english_is_left_alone():
    english = hooks.on_config(config_of("mkdocs.yml"))
    english_separator = english.plugins["material/search"].config.separator
    japanese = hooks.on_config(config_of("mkdocs.ja.yml"))
    japanese_separator = japanese.plugins["material/search"].config.separator
    assert english_separator == config_of("mkdocs.yml").plugins["material/search"].config.separator
    assert "|(?<=プロンプト)(?=キャッシュ)" in japanese_separator
    base = config_of("mkdocs.ja.yml").plugins["material/search"].config.separator
    assert japanese_separator.startswith(base + "|")


def page_named(name: str, config) -> Page:
    file = File(name, str(ROOT / "docs_en"), "/tmp/site", use_directory_urls=True)
    return Page(None, file, config)


@pytest.fixture
def built_root(tmp_path, monkeypatch) -> Path:
    """hooks.py's project root moved here: v1_basic.py as it is, and the figures a build made."""
    (tmp_path / "v1_basic.py").write_text(config_text("v1_basic.py"), encoding="utf-8")
    (tmp_path / ".generated").mkdir()
    numbers = {"lines.v1_basic/loop": "42", "x": "1,010", "y": "1,010"}
    (tmp_path / ".generated" / "numbers.json").write_text(json.dumps(numbers), encoding="utf-8")
    monkeypatch.setattr(hooks, "ROOT", tmp_path)
    return tmp_path


SECTION = '```python title="v1_basic.py"\n--8<-- "sections/v1_basic/loop.py"\n```\n'


def test_a_page_gets_its_figures_its_line_numbers_and_its_claims_checked(built_root):
    config = config_of("mkdocs.yml")
    page = page_named("v2.md", config)
    markdown = f"It reads {{{{ x }}}} of {{{{ y }}}}. <!-- check: x == y -->\n\n{SECTION}"
    assert hooks.on_page_markdown(markdown, page, config, Files([])) == (
        "It reads 1,010 of 1,010. \n\n"
        '```python title="v1_basic.py" linenums="42"\n--8<-- "sections/v1_basic/loop.py"\n```\n')
    with pytest.raises(PluginError, match=r"^v2.md says something only true if x < y"):
        hooks.on_page_markdown("<!-- check: x < y -->\n", page, config, Files([]))
    with pytest.raises(PluginError) as unknown:
        hooks.on_page_markdown("{{ z }}\n", page, config, Files([]))
    assert "z" in str(unknown.value) and "v2.md" in str(unknown.value)


def test_a_page_with_no_figures_needs_no_build_and_is_left_as_it_is(built_root):
    config = config_of("mkdocs.yml")
    (built_root / ".generated" / "numbers.json").unlink()
    plain = "# A page\n\nNo figures, no sections.\n"
    assert hooks.on_page_markdown(plain, page_named("setup.md", config), config,
                                  Files([])) == plain
    for needs_figures in ("{{ x }}\n", SECTION, "<!-- check: x == y -->\n"):
        with pytest.raises(PluginError, match=r"^the pages quote numbers that `python -m "
                                              r"docsgen` makes: run it first$"):
            hooks.on_page_markdown(needs_figures, page_named("setup.md", config), config,
                                   Files([]))


def test_a_chapters_plumbing_table_and_a_table_of_every_script_are_checked(built_root):
    config = config_of("mkdocs.yml")
    chapter = config_text("docs_en/v1.md")
    drifted = chapter.replace("`clip`", "`clip`, `cut_note`", 1)
    with pytest.raises(PluginError, match="v1.md's plumbing table is not v1_basic.py's"):
        hooks.on_page_markdown(drifted, page_named("v1.md", config), config, Files([]))
    (built_root / "v1_basic.py").unlink()  # a chapter whose script is not there: not checked
    (built_root / ".generated" / "numbers.json").unlink()
    table = "<!-- rows: scripts -->\n| Script |\n| --- |\n| `v1_basic.py` |\n"
    with pytest.raises(PluginError, match=r"^setup.md: the table marked `rows: scripts` lists"):
        hooks.on_page_markdown(table, page_named("setup.md", config), config, Files([]))
    drifted_table = drifted.replace("{{", "{ {").replace("<!-- check", "<!-- not")
    drifted_table = "\n".join(line for line in drifted_table.splitlines()
                              if "sections/" not in line) + "\n"
    assert "`cut_note`" in hooks.on_page_markdown(drifted_table, page_named("v1.md", config),
                                                  config, Files([]))


# -- the build command --


def test_the_commit_time_is_gits_and_none_outside_a_checkout(tmp_path, monkeypatch):
    committed = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
    assert build_command.commit_time() == committed and committed.isdigit()
    monkeypatch.setattr(build_command, "ROOT", tmp_path)  # no repository here
    assert build_command.commit_time() is None
    monkeypatch.setenv("PATH", str(tmp_path))  # no git at all
    assert build_command.commit_time() is None
    git = tmp_path / "git"  # a git that fails after printing something is not believed
    git.write_text("#!/bin/sh\necho 1700000000\nexit 128\n", encoding="utf-8")
    git.chmod(0o755)
    assert build_command.commit_time() is None


def test_git_is_given_30_seconds_to_say_the_commit_time(monkeypatch):
    waits = []  # the deadline git is run with, seen on its way to subprocess
    run = subprocess.run

    def running(*args, **kwargs):
        waits.append(kwargs.get("timeout"))
        return run(*args, **kwargs)

    monkeypatch.setattr(subprocess, "run", running)
    assert build_command.commit_time().isdigit()
    assert waits == [30]


@pytest.fixture
def recorded_build(monkeypatch) -> list:
    """build_site()'s heavy steps replaced by a note of each call: fetching mermaid, making
    .generated/ (every demo), and each mkdocs build (with the folder it would build into)."""
    steps = []
    monkeypatch.setattr(build_command, "fetch_mermaid", lambda: steps.append("fetch"))
    monkeypatch.setattr(build_command, "write_all", lambda: steps.append("generate"))
    monkeypatch.setattr(build_command, "build", lambda config: steps.append(
        ("build", config["theme"]["language"], config["site_dir"], config["strict"],
         os.environ.get(hooks.BUILT_BY_DOCSGEN), os.environ.get("SOURCE_DATE_EPOCH"))))
    monkeypatch.delenv(hooks.BUILT_BY_DOCSGEN, raising=False)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    return steps


def test_the_build_generates_then_builds_english_then_japanese_dated_by_the_commit(
        recorded_build, tmp_path):
    build_command.build_site(tmp_path / "out")
    committed = build_command.commit_time()
    assert recorded_build == [
        "fetch", "generate",
        ("build", "en", str(tmp_path / "out"), True, "1", committed),
        ("build", "ja", str(tmp_path / "out" / "ja"), True, "1", committed),
    ]


def test_an_offline_build_fetches_nothing_and_keeps_a_date_already_set(
        recorded_build, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    build_command.build_site(offline=True)
    assert recorded_build == [
        "generate",
        ("build", "en", str(ROOT / "site"), True, "1", "1700000000"),
        ("build", "ja", str(ROOT / "site" / "ja"), True, "1", "1700000000"),
    ]


def fresh_root_logger(monkeypatch) -> None:
    """The root logger as a fresh process has it (no handler, WARNING), for main() to configure;
    as it was after the test. setLevel(), not the attribute: it also empties each logger's cache of
    what it lets through, which an earlier test may have filled at INFO. (In the test's body:
    pytest adds its own handler to the root logger after the fixtures.)"""
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])  # pytest's own, which basicConfig would keep
    monkeypatch.setattr(root, "level", root.level)
    root.setLevel(logging.WARNING)


@pytest.mark.parametrize("error", [MkDocsException("v1.md: a broken link"),
                                   SnippetMissingError("no such file: x"),
                                   vendor.VendorError("could not fetch mermaid")])
def test_a_failed_build_is_one_line_and_exit_code_1(error, monkeypatch, capsys):
    called = []

    def failing(site_dir, offline):
        called.append((site_dir, offline))
        raise error

    monkeypatch.setattr(build_command, "build_site", failing)
    monkeypatch.setattr(sys, "argv", ["docsgen", "--site-dir", "built", "--offline"])
    fresh_root_logger(monkeypatch)
    assert build_command.main() == 1
    assert capsys.readouterr().err == f"docs build failed: {error}\n"
    assert called == [(Path("built").resolve(), True)]


def test_a_build_that_works_exits_0_into_site_by_default_and_logs_as_mkdocs_does(
        monkeypatch, capsys):
    called = []

    def build_site(site_dir, offline):
        called.append((site_dir, offline))
        logging.getLogger("mkdocs.commands.build").info("Documentation built in 0.1 seconds")

    monkeypatch.setattr(build_command, "build_site", build_site)
    monkeypatch.setattr(sys, "argv", ["docsgen"])
    fresh_root_logger(monkeypatch)
    assert build_command.main() == 0
    assert called == [(None, False)]
    assert capsys.readouterr().err == "INFO    - Documentation built in 0.1 seconds\n"


# -- screenshots --


def test_screenshots_take_every_page_the_home_page_as_the_root():
    paths = screenshots.page_paths()
    pages = sorted(path.stem for path in (ROOT / "docs_en").glob("*.md"))
    assert paths == ["" if page == "index" else f"{page}/" for page in pages]
    assert "" in paths and "v1/" in paths and "index/" not in paths


def test_screenshots_without_a_built_site_say_what_they_need(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["screenshots", "--site-dir", str(tmp_path),
                                      "--out", str(tmp_path / "shots")])
    assert screenshots.main() == 1
    assert capsys.readouterr().out == (
        "needs a built site (python -m docsgen) and Chromium (apt-get install chromium)\n")
    assert not (tmp_path / "shots").exists()


def test_each_command_says_what_it_does_in_its_help(monkeypatch, capsys):
    for command, name, words in [
        (screenshots.main, "screenshots", ["Screenshots of the pages, both languages, on a "
                                           "desktop and on a phone, for a review by eye.",
                                           '--page PAGE a page, e.g. "v3/" (default: all)',
                                           "--width {desktop,phone} default: both",
                                           "--figures also each diagram and chart"]),
        (build_command.main, "docsgen", ["Build the docs site, both languages, strictly.",
                                         "--site-dir SITE_DIR build into this folder instead "
                                         "of site/",
                                         "--offline do not fetch mermaid if missing"]),
    ]:
        monkeypatch.setattr(sys, "argv", [name, "--help"])
        with pytest.raises(SystemExit):
            command()
        shown = " ".join(capsys.readouterr().out.split())
        assert all(f" {line} " in f" {shown} " for line in words), shown


class Browser:
    """What `python -m docsgen.screenshots` asks of Playwright's Chromium, noted, with a picture
    file written for each screenshot: a stand-in for the browser, which test_browser.py and
    test_layout.py drive for real (a launch per mutant would cost seconds)."""

    def __init__(self):
        self.log, self.routes = [], []
        self.chromium = self

    def __call__(self):  # sync_playwright()
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def launch(self, executable_path):
        self.log.append(("launch", executable_path))
        return self

    def new_context(self, viewport):
        self.log.append(("context", viewport["width"], viewport["height"]))
        return self

    def route(self, pattern, handler):
        self.routes.append((pattern, handler))

    def new_page(self):
        return self

    def goto(self, address):  # the page is fetched, as the browser would
        self.log.append(("goto", address, fetch(address)[0]))

    def wait_for_timeout(self, milliseconds):
        self.log.append(("wait", milliseconds))

    def screenshot(self, path, full_page=False, style=None):
        Path(path).write_bytes(b"a picture")
        self.log.append(("shot", Path(path).name, full_page, style))

    def locator(self, selector):
        self.log.append(("figures", selector))
        return self

    def all(self):
        return [self, self]  # two figures on every page

    def close(self):
        self.log.append(("close",))


class Route:
    def __init__(self, url):
        self.request, self.url, self.done = self, url, None

    def continue_(self):
        self.done = "continued"

    def abort(self):
        self.done = "aborted"


def browser_in_place_of_playwright(monkeypatch) -> Browser:
    """A Browser stand-in where the screenshot command imports playwright.sync_api from."""
    browser = Browser()
    playwright = type(sys)("playwright.sync_api")
    playwright.sync_playwright = browser
    monkeypatch.setitem(sys.modules, "playwright.sync_api", playwright)
    return browser


def test_screenshots_take_each_page_and_width_in_both_languages_from_the_served_site(
        small_site, tmp_path, monkeypatch, capsys):
    browser = browser_in_place_of_playwright(monkeypatch)
    monkeypatch.setattr(screenshots.shutil, "which",
                        lambda name: "/usr/bin/chromium" if name == "chromium" else None)
    out = tmp_path / "shots"
    monkeypatch.setattr(sys, "argv", ["screenshots", "--site-dir", str(small_site), "--out",
                                      str(out), "--page", "", "--page", "v1/", "--width",
                                      "phone", "--figures"])
    assert screenshots.main() == 0
    names = sorted(path.name for path in out.iterdir())
    pages = [f"{language}-{page}-390" for language in ("en", "ja") for page in ("index", "v1")]
    figures = [f"{page}-figure{number}" for page in pages for number in (1, 2)]
    assert names == sorted(f"{name}.png" for name in pages + figures)
    assert capsys.readouterr().out == f"12 screenshots in {out}\n"
    log = browser.log
    assert log[0] == ("launch", "/usr/bin/chromium") and log[1] == ("context", 390, 900)
    visited = [entry[1:] for entry in log if entry[0] == "goto"]
    base = visited[0][0]
    assert base.startswith("http://127.0.0.1:") and base.endswith("/how-coding-agents-work/")
    assert visited == [(base, 200), (base + "v1/", 200), (base + "ja/", 200),
                       (base + "ja/v1/", 404)]  # the small site has no Japanese v1 page
    assert log.count(("wait", 500)) == 4
    shots = [entry for entry in log if entry[0] == "shot"]
    assert ("shot", "en-v1-390.png", True, None) in shots
    assert ("shot", "ja-index-390-figure2.png", False, screenshots.HIDE_HEADER) in shots
    assert ("figures", screenshots.FIGURES) in log
    assert log[-2:] == [("close",), ("close",)]  # the context, then the browser
    [(pattern, handler)] = browser.routes
    assert pattern == "**/*"
    routes = [Route(base + "v1/"), Route("https://unpkg.com/mermaid.js")]
    for route in routes:
        handler(route)
    assert [route.done for route in routes] == ["continued", "aborted"]


def test_screenshots_take_every_page_at_both_widths_by_default(
        small_site, tmp_path, monkeypatch, capsys):
    browser = browser_in_place_of_playwright(monkeypatch)
    monkeypatch.setattr(screenshots.shutil, "which",  # Ubuntu's name for it, and only that
                        lambda name: "/usr/bin/chromium-browser"
                        if name == "chromium-browser" else None)
    monkeypatch.setattr(sys, "argv", ["screenshots", "--site-dir", str(small_site), "--out",
                                      str(tmp_path / "shots")])
    assert screenshots.main() == 0
    widths = [entry[1] for entry in browser.log if entry[0] == "context"]
    assert widths == [1280, 390]
    visited = [entry[1] for entry in browser.log if entry[0] == "goto"]
    assert len(visited) == 2 * 2 * len(screenshots.page_paths())
    assert not [entry for entry in browser.log if entry[0] == "figures"]
    assert browser.log[0] == ("launch", "/usr/bin/chromium-browser")


def test_screenshots_read_site_and_write_screenshots_of_the_project_by_default(
        small_site, tmp_path_factory, monkeypatch, capsys):
    project = tmp_path_factory.mktemp("project")
    shutil.copytree(small_site, project / "site")
    browser = browser_in_place_of_playwright(monkeypatch)
    monkeypatch.setattr(screenshots, "ROOT", project)
    monkeypatch.setattr(screenshots.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(sys, "argv", ["screenshots", "--page", "v1/", "--width", "desktop"])
    assert screenshots.main() == 0
    assert sorted(path.name for path in (project / "screenshots").iterdir()) == [
        "en-v1-1280.png", "ja-v1-1280.png"]
    assert [entry[2] for entry in browser.log if entry[0] == "goto"] == [200, 404]
    deeper = project / "review" / "today"
    monkeypatch.setattr(sys, "argv", ["screenshots", "--page", "", "--out", str(deeper),
                                      "--width", "phone"])
    assert screenshots.main() == 0
    assert capsys.readouterr().out.endswith(f"2 screenshots in {deeper}\n")
    assert screenshots.main() == 0  # again, into the folder the first run made: taken anew
    assert capsys.readouterr().out.endswith(f"2 screenshots in {deeper}\n")
    monkeypatch.setattr(sys, "argv", ["screenshots", "--width", "tablet"])
    with pytest.raises(SystemExit):
        screenshots.main()
    assert "invalid choice: 'tablet'" in capsys.readouterr().err
