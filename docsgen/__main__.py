"""Build the whole docs site, both languages, in strict mode: `python -m docsgen`.

    1. generate .generated/ (diffs between versions, demo transcripts)
    2. mkdocs build --strict -f mkdocs.yml       -> site/     (English)
    3. mkdocs build --strict -f mkdocs.ja.yml    -> site/ja/  (Japanese)

English goes first because building site/ empties it, site/ja/ included.
Steps 2 and 3 run in this process, which saves starting Python twice.
While writing pages, run this once, then `mkdocs serve` (or
`mkdocs serve -f mkdocs.ja.yml`) for a live preview of one language.
"""

import logging
import sys
from pathlib import Path

from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import MkDocsException
from pymdownx.snippets import SnippetMissingError

from docsgen.generated import write_all

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ["mkdocs.yml", "mkdocs.ja.yml"]


def build_site() -> None:
    write_all()
    for name in CONFIGS:
        build(load_config(str(ROOT / name), strict=True))


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)-7s - %(message)s")
    try:
        build_site()
    except (MkDocsException, SnippetMissingError) as error:  # strict: any warning aborts; mkdocs named the page
        print(f"docs build failed: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
