"""What the site serves from its own files instead of a CDN, so that every page works offline.

mermaid draws the diagrams. mkdocs-material loads it from unpkg.com unless the page already has
a global `mermaid`; so the site ships a pinned copy as assets/javascripts/mermaid.min.js, loaded
before Material's own script (docsgen/hooks.py adds it to both languages).

    python -m docsgen.vendor     fetch it once from the npm registry (python -m docsgen does too)

The package's tarball is checked against the integrity hash the registry published for this
version, and only two of its files are kept, in .vendor/ (git-ignored): dist/mermaid.min.js and
the LICENSE that comes with it.
"""

import base64
import hashlib
import io
import os
import sys
import tarfile
import urllib.error
import urllib.request

from scripted import ROOT

# Material asks for mermaid@11; this is the version the site pins, and its hash from the registry
# (`npm view mermaid@11.12.3 dist.integrity`).
MERMAID_VERSION = "11.12.3"
MERMAID_INTEGRITY = (
    "sha512-wN5ZSgJQIC+CHJut9xaKWsknLxaFBwCPwPkGTSUYrTiHORWvpT8RxGk849HPnpUAQ+/9BPRqYb80jTpearrHzQ=="
)
VENDOR = ROOT / ".vendor" / f"mermaid-{MERMAID_VERSION}"
MERMAID_JS = VENDOR / "mermaid.min.js"
KEEP = {"package/LICENSE": "LICENSE", "package/dist/mermaid.min.js": "mermaid.min.js"}


class VendorError(Exception):
    """A pinned file could not be fetched or did not match its hash; the message says what to do."""


def tarball_url() -> str:
    registry = os.environ.get("npm_config_registry") or "https://registry.npmjs.org/"
    return f"{registry.rstrip('/')}/mermaid/-/mermaid-{MERMAID_VERSION}.tgz"


def integrity_of(data: bytes) -> str:
    """The npm integrity string of some bytes: "sha512-" and the base64 of their SHA-512."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def fetch_mermaid() -> None:
    """Make sure .vendor/ holds the pinned mermaid; fetch and check it if it does not."""
    if MERMAID_JS.exists():
        return
    url = tarball_url()
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            tarball = response.read()
    except (urllib.error.URLError, OSError) as error:
        raise VendorError(
            f"could not fetch mermaid {MERMAID_VERSION} from {url} ({error}); the diagrams need"
            " it. Check access to the npm registry (or set npm_config_registry to a mirror)."
        ) from None
    if integrity_of(tarball) != MERMAID_INTEGRITY:
        raise VendorError(f"{url} does not match the pinned hash {MERMAID_INTEGRITY}")
    VENDOR.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(tarball)) as archive:
        for member, name in KEEP.items():  # mermaid.min.js last: once it is there, all is
            partial = VENDOR / f".{name}.partial"
            partial.write_bytes(archive.extractfile(member).read())
            partial.replace(VENDOR / name)


def main() -> int:
    try:
        fetch_mermaid()
    except VendorError as error:
        print(f"docsgen.vendor: {error}", file=sys.stderr)
        return 1
    print(f"mermaid {MERMAID_VERSION}: {MERMAID_JS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
