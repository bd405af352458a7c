"""Loading a version script as a fresh module, for the tests and the benchmarks.

The scripts are meant to be run, not imported, so there is no package to import them from. Loading
one from its path runs its top level again, which re-reads the environment (limits such as
BASH_TIMEOUT) and makes a new `anthropic.Anthropic()` client aimed at ANTHROPIC_BASE_URL.
This module needs only requirements.txt: `python bench/caching.py` runs after the set-up the
chapters describe, without the test tools (tests/test_generators.py checks it).
"""

import importlib.util
from pathlib import Path
from types import CodeType, ModuleType

from scripted import ROOT, SCRIPTS

VERSIONS = [version for version, name in SCRIPTS.items() if (ROOT / name).exists()]


def load_agent(version: str) -> ModuleType:
    """The script as a fresh module under its own name (v1_basic ...), which mutmut names the
    mutants of its functions by (tests/mutation.py)."""
    return load_script(ROOT / SCRIPTS[version], Path(SCRIPTS[version]).stem)


def load_script(path: Path, name: str = "") -> ModuleType:
    """A fresh module from any script file: a version script, or a workshop solution built on
    one, named after its file (v2_planning), as mutmut names the mutants of its functions. Its
    top level runs again each time; only the compiling is done once per file content."""
    spec = importlib.util.spec_from_file_location(name or Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    exec(compiled(Path(path)), module.__dict__)
    return module


COMPILED: dict[tuple[str, bytes], CodeType] = {}


def compiled(path: Path) -> CodeType:
    """The script's code object, compiled from its current text. Python caches compiled files
    on disk, but not for a module loaded from a path under a new name, nor at all where
    PYTHONDONTWRITEBYTECODE is set: then every load compiled the script again (about 15 ms, a
    thousand loads in a run)."""
    source = path.read_bytes()
    key = (str(path), source)
    if key not in COMPILED:
        COMPILED[key] = compile(source, str(path), "exec", dont_inherit=True)
    return COMPILED[key]
