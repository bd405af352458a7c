"""Build the whole docs site, both languages, in strict mode: `python -m docsgen [--site-dir DIR]`.

    1. generate .generated/ (sections of the scripts, diffs between versions, demo transcripts)
    2. mkdocs build --strict -f mkdocs.yml       -> site/     (English)
    3. mkdocs build --strict -f mkdocs.ja.yml    -> site/ja/  (Japanese)

English goes first because building site/ empties it, site/ja/ included.
--site-dir builds into another folder (DIR and DIR/ja), as the tests do.
Steps 2 and 3 run in this process, which saves starting Python twice.
While writing pages, run this once, then `mkdocs serve` (or
`mkdocs serve -f mkdocs.ja.yml`) for a live preview of one language;
after editing a script, run it again to regenerate what the pages include.
"""

import argparse
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


def build_site(site_dir: Path | None = None) -> None:
    write_all()
    for name in CONFIGS:
        config = load_config(str(ROOT / name), strict=True)
        if site_dir is not None:  # the same layout, moved: site/ja/ becomes DIR/ja/
            config["site_dir"] = str(site_dir / Path(config["site_dir"]).relative_to(ROOT / "site"))
        build(config)


def main() -> int:
    parser = argparse.ArgumentParser(description="Build the docs site, both languages, strictly.")
    parser.add_argument("--site-dir", type=Path, help="build into this folder instead of site/")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)-7s - %(message)s")
    try:
        build_site(args.site_dir.resolve() if args.site_dir else None)
    except (
        MkDocsException,
        SnippetMissingError,
    ) as error:  # strict: any warning aborts; mkdocs named the page
        print(f"docs build failed: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
