"""Build the whole docs site, both languages, in strict mode: `python -m docsgen [--site-dir DIR]`.

    0. fetch the pinned mermaid into .vendor/ once, so diagrams draw offline (docsgen/vendor.py)
    1. generate .generated/ (sections of the scripts, diffs between versions, demo transcripts,
       and from the same demo runs the "Under the hood" pages; the change cards; the charts)
    2. mkdocs build --strict -f mkdocs.yml       -> site/     (English)
    3. mkdocs build --strict -f mkdocs.ja.yml    -> site/ja/  (Japanese)

English goes first because building site/ empties it, site/ja/ included. Two builds of the same
commit give the same files: the dates mkdocs writes (sitemap.xml, and the time inside
sitemap.xml.gz) are the commit's, through SOURCE_DATE_EPOCH, not the day of the build.
--site-dir builds into another folder (DIR and DIR/ja), as the tests do. --offline skips step 0:
without mermaid in .vendor/ the pages then load it from a CDN, as Material does by default.
Steps 2 and 3 run in this process, which saves starting Python twice.
While writing pages, run this once, then `mkdocs serve` (or
`mkdocs serve -f mkdocs.ja.yml`) for a live preview of one language;
after editing a script, run it again to regenerate what the pages include.
"""

import argparse
import logging
import os
import subprocess
import sys
from pathlib import Path

from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import MkDocsException
from pymdownx.snippets import SnippetMissingError

from docsgen.generated import write_all
from docsgen.hooks import BUILT_BY_DOCSGEN
from docsgen.vendor import VendorError, fetch_mermaid

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ["mkdocs.yml", "mkdocs.ja.yml"]


def commit_time() -> str | None:
    """The time of the checked-out commit, in seconds since the epoch; None outside git."""
    try:
        done = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True,
                              text=True, timeout=30)
    except OSError:  # no git
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def build_site(site_dir: Path | None = None, offline: bool = False) -> None:
    if not offline:
        fetch_mermaid()
    write_all()
    os.environ[BUILT_BY_DOCSGEN] = "1"  # docsgen/hooks.py refuses a plain `mkdocs build`
    if "SOURCE_DATE_EPOCH" not in os.environ and (committed := commit_time()):
        os.environ["SOURCE_DATE_EPOCH"] = committed  # the reproducible-builds.org convention
    for name in CONFIGS:
        config = load_config(str(ROOT / name), strict=True)
        if site_dir is not None:  # the same layout, moved: site/ja/ becomes DIR/ja/
            config["site_dir"] = str(site_dir / Path(config["site_dir"]).relative_to(ROOT / "site"))
        build(config)


def main() -> int:
    parser = argparse.ArgumentParser(description="Build the docs site, both languages, strictly.")
    parser.add_argument("--site-dir", type=Path, help="build into this folder instead of site/")
    parser.add_argument("--offline", action="store_true", help="do not fetch mermaid if missing")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)-7s - %(message)s")
    try:
        build_site(args.site_dir.resolve() if args.site_dir else None, args.offline)
    except (MkDocsException, SnippetMissingError, VendorError) as error:
        # strict: any warning aborts; mkdocs named the page
        print(f"docs build failed: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
