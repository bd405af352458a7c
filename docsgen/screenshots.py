"""Screenshots of the pages, both languages, on a desktop and on a phone, for a review by eye.

    python -m docsgen.screenshots [--site-dir site] [--out screenshots]
        [--page v3/ ...] [--width phone] [--figures]

Build the site first (`python -m docsgen`). The pages are served on 127.0.0.1 and opened in
Debian's Chromium through Playwright, with every other host blocked, as the tests do; each page is
captured whole at 1280 px and at 390 px wide (a phone), e.g. screenshots/ja-v3-390.png.
--page and --width take a few of them only ("" is the home page); --figures also saves each
diagram and chart as its own picture, as it appears on the page: ja-v3-390-figure1.png.
A bare Debian machine has no Japanese font: install one (apt-get install fonts-ipafont-gothic), or
the Japanese pages show boxes in place of their text.
"""

import argparse
import shutil
import sys
from pathlib import Path

from docsgen.serve import serving
from scripted import ROOT

WIDTHS = {"desktop": 1280, "phone": 390}
# What a reader sees of each figure: its scrolling box where it has one, else the figure itself.
FIGURES = ".md-typeset .mermaid, .md-typeset figure.hood-chart"
HIDE_HEADER = ".md-header, .md-tabs { visibility: hidden !important; }"


def page_paths() -> list[str]:
    pages = sorted(path.stem for path in (ROOT / "docs_en").glob("*.md"))
    return ["" if page == "index" else f"{page}/" for page in pages]


def shoot(page, out: Path, name: str, figures: bool) -> None:
    page.screenshot(path=out / f"{name}.png", full_page=True)
    if not figures:
        return
    for number, figure in enumerate(page.locator(FIGURES).all(), start=1):
        # the header stays at the top of the window and would cover the top of a tall figure
        figure.screenshot(path=out / f"{name}-figure{number}.png", style=HIDE_HEADER)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site-dir", type=Path, default=ROOT / "site")
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    parser.add_argument("--page", action="append", help='a page, e.g. "v3/" (default: all)')
    parser.add_argument("--width", action="append", choices=WIDTHS, help="default: both")
    parser.add_argument("--figures", action="store_true", help="also each diagram and chart")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not (args.site_dir / "index.html").exists() or chromium is None:
        print("needs a built site (python -m docsgen) and Chromium (apt-get install chromium)")
        return 1
    from playwright.sync_api import sync_playwright  # a dev requirement, like the docs build

    args.out.mkdir(parents=True, exist_ok=True)
    paths = args.page if args.page is not None else page_paths()
    widths = [WIDTHS[name] for name in args.width or WIDTHS]
    with serving(args.site_dir) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        for width in widths:
            context = browser.new_context(viewport={"width": width, "height": 900})
            context.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url.startswith("http://127.0.0.1")
                    else route.abort()
                ),
            )
            page = context.new_page()
            for language in ("en", "ja"):
                for path in paths:
                    page.goto(base + ("ja/" if language == "ja" else "") + path)
                    page.wait_for_timeout(500)  # diagrams draw after the page has loaded
                    name = f"{language}-{path.strip('/') or 'index'}-{width}"
                    shoot(page, args.out, name, args.figures)
            context.close()
        browser.close()
    print(f"{len(list(args.out.glob('*.png')))} screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
