"""mkdocs hooks for both sites (mkdocs.yml names this file under `hooks:`; mkdocs.ja.yml inherits).

- A plain `mkdocs build` stops with one line: it would build English only and, since mkdocs empties
  its site folder first, delete site/ja. `python -m docsgen` builds both (it sets BUILT_BY_DOCSGEN).
  `mkdocs serve` is fine: it builds into a folder of its own.
- The Japanese site lives under the English one: its site_url and edit links are the English ones
  with ja/ and docs_ja/, so the published address is written once, in mkdocs.yml.
- Each language switch target gets an absolute `url` (for the <head> links, overrides/main.html).
- mermaid is served from the site (see docsgen/vendor.py), when it has been fetched.
- Japanese search splits the katakana compounds the pages use into their words (docsgen/search.py).
- `{{ name }}` on a page becomes the number docsgen made for it (docsgen/numbers.py); a sentence
  about such a number carries its claim, checked here, and a chapter's table of the plumbing is
  checked against its script's import block, and a table marked as listing every script or every
  exercise against the files (docsgen/claims.py).
- A code block that shows a section of a script numbers its lines as the file does.
"""

import json
import os
import re
from pathlib import Path
from urllib.parse import urljoin

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort, PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from docsgen.claims import (
    CLAIM,
    FalseClaim,
    check_claims,
    check_plumbing_table,
    check_rows,
    listed_rows,
)
from docsgen.numbers import fill_in
from docsgen.search import japanese_separator
from docsgen.vendor import MERMAID_JS
from scripted import ROOT, SCRIPTS

BUILT_BY_DOCSGEN = "BUILT_BY_DOCSGEN"
# ```python title="v1_basic.py"  followed by  --8<-- "sections/v1_basic/loop.py"
SECTION_BLOCK = re.compile(r'^( *```python[^\n]*?)(\n *--8<-- "sections/([\w/]+)\.py")', re.M)
MERMAID_URL = "assets/javascripts/mermaid.min.js"


def on_startup(command: str, dirty: bool) -> None:
    if command in ("build", "gh-deploy") and not os.environ.get(BUILT_BY_DOCSGEN):
        raise Abort(
            "build the site with `python -m docsgen`: it makes the generated pages first and builds"
            " both languages (a plain `mkdocs build` would delete site/ja)"
        )


# before the search plugin's own on_config, which copies its settings into the index it builds
@event_priority(100)
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if config.theme["language"] == "ja":
        config.site_url = f"{config.site_url}ja/"
        config.edit_uri = config.edit_uri.replace("docs_en/", "docs_ja/")
        search = config.plugins["material/search"].config
        search.separator = japanese_separator(search.separator, Path(config.docs_dir))
    for alternate in config.extra["alternate"]:
        alternate["url"] = urljoin(config.site_url, alternate["link"])
    if MERMAID_JS.exists():  # overrides/main.html loads it before Material's bundle
        config.extra["mermaid_url"] = MERMAID_URL
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    if MERMAID_JS.exists():
        files.append(File.generated(config, MERMAID_URL, abs_src_path=str(MERMAID_JS)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    script = SCRIPTS.get(Path(page.file.src_uri).stem)  # v1.md: v1_basic.py's chapter
    if script and (ROOT / script).exists():
        source = (ROOT / script).read_text(encoding="utf-8")
        try:
            check_plumbing_table(markdown, script, source, page.file.src_uri)
        except FalseClaim as error:
            raise PluginError(error.args[0]) from None
    try:
        markdown = check_rows(markdown, listed_rows(), page.file.src_uri)
    except FalseClaim as error:
        raise PluginError(error.args[0]) from None
    numbers_file = ROOT / ".generated" / "numbers.json"
    if "{{ " not in markdown and "sections/" not in markdown and not CLAIM.search(markdown):
        return markdown
    if not numbers_file.exists():
        raise PluginError("the pages quote numbers that `python -m docsgen` makes: run it first")
    numbers = json.loads(numbers_file.read_text(encoding="utf-8"))
    markdown = SECTION_BLOCK.sub(
        lambda block: f'{block[1]} linenums="{numbers[f"lines.{block[3]}"]}"{block[2]}', markdown
    )
    try:
        markdown = check_claims(markdown, numbers, page.file.src_uri)
        return fill_in(markdown, numbers, page.file.src_uri)
    except (KeyError, FalseClaim) as error:
        raise PluginError(error.args[0]) from None
