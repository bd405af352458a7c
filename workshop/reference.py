"""The reference solutions of the workshop: each is a version script with its exercise's
solution.diff applied.

The repository keeps no finished copy of a version script (copies drift apart), only the diff. This
module applies it, for the tests and for a trainer who wants to read or run a solution:

    # writes /tmp/ref01/v1_basic.py, the solution
    python -m workshop.reference 01-search-tool /tmp/ref01

Each exercise also keeps variants of its solution, as small diffs applied on top of the reference:
`wrong/<rule>-<mistake>.diff` breaks one rule of the exercise's README the way participants do (the
tests must reject it, naming that rule), and `right/<rules>-<name>.diff` is another correct solution
the README allows, worded or built differently for the rules its name starts with (the tests must
pass it):

    # writes /tmp/wrong/v1_basic.py: the reference with the cap applied per file
    python -m workshop.reference 01-search-tool /tmp/wrong --variant wrong/3-limit-per-file

The diff is applied strictly: every line it keeps or removes must be found, in order, in the base
script. A hunk is looked for near the line the diff names, so edits elsewhere in the base do not
break it. The folder starts empty each time: a folder this tool wrote before is emptied first, and
any other folder with files in it is refused, so one variant never inherits another's files. """

import argparse
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKSHOP = ROOT / "workshop"
EXERCISES = {  # exercise folder: the version script it extends
    "01-search-tool": "v1_basic.py",
    "02-ask-before-bash": "v1_basic.py",
    "03-todo-on-disk": "v2_planning.py",
    "04-review-agent": "v3_subagents.py",
    "05-report-modes": "v3_subagents.py",
    "06-your-own-skill": "v4_skills.py",
    "07-what-survives": "v5_compaction.py",
    "08-response-modes": "workshop/08-response-modes/search_server.py",  # a server, not a version
}
HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@")
MARKER = ".workshop-reference"  # in each folder main() writes: it may empty that folder next time


class DiffDoesNotApply(Exception):
    """The base script changed where the diff edits it: the diff must be brought up to date."""


def build_reference(exercise: str, folder: Path) -> Path:
    """Copy the exercise's base script into folder, apply its solution.diff there; return the
    script's path."""
    script = folder / Path(EXERCISES[exercise]).name
    shutil.copyfile(ROOT / EXERCISES[exercise], script)
    apply_diff((WORKSHOP / exercise / "solution.diff").read_text(encoding="utf-8"), folder)
    return script


def variants(exercise: str, kind: str) -> list[str]:
    """The names of an exercise's wrong or right solutions ("wrong/3-limit-per-file", ...)."""
    return sorted(
        f"{kind}/{path.stem}" for path in (WORKSHOP / exercise / kind).glob("*.diff")
    )


def rule_of(variant: str) -> int:
    """The rule a wrong solution breaks: the number its file name starts with."""
    return rules_of(variant)[0]


def rules_of(variant: str) -> list[int]:
    """The numbers a variant's file name starts with: the rule a wrong solution breaks, or the
    rules a right one words or builds differently ("right/2-3-6-sorted-by-key": 2, 3 and 6)."""
    rules = []
    for part in Path(variant).name.split("-"):
        if not part.isdigit():
            break
        rules.append(int(part))
    return rules


def build_variant(exercise: str, variant: str, folder: Path) -> Path:
    """The reference solution in folder, with the variant's diff ("wrong/3-...") applied on top."""
    script = build_reference(exercise, folder)
    diff = WORKSHOP / exercise / f"{variant}.diff"
    apply_diff(diff.read_text(encoding="utf-8"), folder)
    return script


def apply_diff(diff: str, folder: Path) -> None:
    """Apply a unified diff (as `git diff` writes it) to the files in folder; new files are
    created."""
    lines = diff.splitlines()
    at = 0
    while at < len(lines):
        if (
            lines[at].startswith("--- ")
            and at + 1 < len(lines)
            and lines[at + 1].startswith("+++ ")
        ):
            at = apply_file_diff(lines, at, folder)
        else:
            at += 1  # a `diff --git` or `index` line: nothing to do


def apply_file_diff(lines: list[str], at: int, folder: Path) -> int:
    """Apply one file's hunks, which start at lines[at] ('--- a/name'); return where the next file
    starts."""
    old_name, new_name = diff_path(lines[at]), diff_path(lines[at + 1])
    target = folder / (old_name or new_name)
    old = target.read_text(encoding="utf-8").splitlines() if old_name else []
    new, done, at = [], 0, at + 2  # done: how many lines of old are copied or replaced so far
    while at < len(lines) and (header := HUNK_HEADER.match(lines[at])):
        old_count, new_count = int(header[2] or 1), int(header[3] or 1)
        length = hunk_length(lines, at + 1, old_count, new_count)
        hunk = [
            line or " " for line in lines[at + 1 : at + 1 + length] if not line.startswith("\\")
        ]
        at += 1 + length
        before = [line[1:] for line in hunk if line[0] in " -"]
        start = find_block(old, before, done, int(header[1]) - (1 if old_count else 0))
        if start is None:
            raise DiffDoesNotApply(
                f"{target.name}: the lines of hunk {header[0]} are not in the file any more, "
                f"starting with {before[0]!r}"
            )
        new += old[done:start] + [line[1:] for line in hunk if line[0] in " +"]
        done = start + len(before)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(new + old[done:]) + "\n", encoding="utf-8")
    return at


def hunk_length(lines: list[str], at: int, old_count: int, new_count: int) -> int:
    """How many lines the hunk starting at lines[at] has, counted by what they do to the old and the
    new file."""
    length = 0
    while old_count or new_count:
        if at + length == len(lines):
            raise DiffDoesNotApply("the diff ends in the middle of a hunk")
        line = lines[at + length] or " "  # an empty context line may have lost its space
        old_count -= line[0] in " -"
        new_count -= line[0] in " +"
        length += 1
    return length


def find_block(old: list[str], block: list[str], first: int, expected: int) -> int | None:
    """The position at or after `first` where old holds block, the one nearest to `expected`."""
    if not block:
        return max(first, expected)
    places = [
        start
        for start in range(first, len(old) - len(block) + 1)
        if old[start : start + len(block)] == block
    ]
    return min(places, key=lambda start: abs(start - expected), default=None)


def diff_path(header: str) -> str | None:
    """The file name of a '--- a/name' or '+++ b/name' line; None for /dev/null (a new file)."""
    name = header[4:].split("\t")[0].strip()
    return None if name == "/dev/null" else re.sub(r"^[ab]/", "", name)


def empty_folder(folder: Path) -> None:
    """Make folder an empty folder to write into: create it, or empty it if this tool wrote it
    before. A folder with other files in it is refused, never emptied."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = list(folder.iterdir())
    if entries and not (folder / MARKER).is_file():
        raise SystemExit(
            f"{folder} is not empty, and workshop.reference did not write it: name a new folder "
            "or an empty one"
        )
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (folder / MARKER).write_text(
        "written by python -m workshop.reference, which empties this folder on its next run\n",
        encoding="utf-8",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercise", choices=EXERCISES)
    parser.add_argument(
        "folder",
        type=Path,
        help="where to write the solution: a new or empty folder, or one this tool wrote before "
        "(it is emptied first)",
    )
    parser.add_argument(
        "--variant", help="also apply one of the exercise's wrong/ or right/ diffs: wrong/3-..."
    )
    args = parser.parse_args()
    empty_folder(args.folder)
    if args.variant:
        print(build_variant(args.exercise, args.variant, args.folder))
    else:
        print(build_reference(args.exercise, args.folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
