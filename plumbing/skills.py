"""v4: reading SKILL.md files, and the Agent Skills specification's rules.

The lesson decides what a skill is and when its parts are loaded; this module reads the files.
A skill file may be broken or hostile (a huge file, a FIFO, a link out of its folder, YAML that
expands into millions of nodes, escape codes in its name): each is refused with one line, and the
other skills still load.
"""

import os
import re
import sys
from pathlib import Path

import yaml

from plumbing.files import NotRegularFile, open_regular
from plumbing.platforms import Shell, this_platform
from plumbing.screen import Screen, plain

NAME_LIMIT = 64  # characters, as the Agent Skills specification says
DESCRIPTION_LIMIT = 1024  # characters, likewise
NAME_CHARACTERS = re.compile(r"[a-z0-9-]+")
KNOWN_FIELDS = ["name", "description", "license", "compatibility", "metadata", "allowed-tools"]


class SkillSkipped(Exception):
    """A SKILL.md that cannot be used at all: unreadable, no front matter, broken YAML, or no
    description."""


def warn(text: str) -> None:
    print(f"[{plain(text)}]", file=sys.stderr)  # names and paths from skill files


def tool_path(path: Path) -> str:
    """A resolved path as the file tools take it: relative inside the work directory, absolute
    outside."""
    root = Path.cwd().resolve()
    if path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    return str(path)


def without_repeats(folders: list[Path]) -> list[Path]:
    unique = []
    for folder in folders:
        if folder not in unique:
            unique.append(folder)
    return unique


def warn_if_missing(folders: list[Path]) -> None:
    for folder in folders:
        if not folder.is_dir():
            warn(f"no skills folder at {folder}; skipped")


def read_skill_or_warn(read_skill, skill_md: Path):
    """read_skill(skill_md), or None after one line that says why the skill cannot be used."""
    shown = tool_path(skill_md.parent.resolve() / skill_md.name)  # the file, even if a link
    try:
        return read_skill(skill_md)
    except SkillSkipped as exc:
        warn(f"skill skipped: {shown} {exc}")
    except Exception as exc:  # noqa: BLE001 - whatever one skill file does, the others still load
        warn(f"skill skipped: {shown} cannot be loaded: {type(exc).__name__}: {exc}")
    return None


def note_override(old, new, screen: Screen) -> None:
    line = (f"skill {new.name} from {tool_path(new.folder.parent)} overrides the one in "
            f"{tool_path(old.folder.parent)}")
    screen.note(line)  # the screen takes out escape codes that folder names may hold


def read_front_matter(skill_md: Path) -> tuple[dict, str]:
    """The fields of a SKILL.md's front matter, and its body; SkillSkipped if there are none."""
    try:
        front_matter, body = split_front_matter(read_skill_file(skill_md))  # bounded, regular
        fields = yaml.load(front_matter, Loader=FrontMatterLoader)  # noqa: S506 - a SafeLoader
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillSkipped(f"cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        problem = yaml_problem(exc)
        raise SkillSkipped(f"has front matter that is not valid YAML: {problem}") from None
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:  # valid YAML: 2024-02-30
        raise SkillSkipped(f"has front matter that cannot be loaded: {type(exc).__name__}: "
                           f"{exc}") from None
    if not isinstance(fields, dict):
        raise SkillSkipped("has front matter that is not a set of 'key: value' fields")
    refuse_unusable_name(skill_name(fields, skill_md.parent.name))
    return fields, body


def yaml_problem(exc: yaml.YAMLError) -> str:
    """The parser's problem, with the line in SKILL.md (the front matter starts on its second)."""
    problem = getattr(exc, "problem", None) or exc
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return str(problem)
    return f"{problem} (line {mark.line + 2})"


def split_front_matter(text: str) -> tuple[str, str]:
    """(front matter, body) of a SKILL.md whose first line is '---' and that has a closing '---'."""
    lines = text.splitlines()
    fences = [number for number, line in enumerate(lines) if line.rstrip() == "---"]
    if len(fences) < 2 or fences[0] != 0:
        raise SkillSkipped("has no front matter: name and description between two '---' lines at "
                           "the top")
    return "\n".join(lines[1:fences[1]]), "\n".join(lines[fences[1] + 1:]).strip()


def skill_name(fields: dict, folder: str) -> str:
    name = fields.get("name")
    if not isinstance(name, str) or not name:
        name = folder
    return as_utf8(name)  # a folder name need not be UTF-8; a request must


def warn_of_spec_problems(fields: dict, skill_md: Path) -> None:
    for problem in spec_problems(fields, skill_md.parent.name):
        warn(f"skill warning: {tool_path(skill_md.resolve())} {problem}")


def spec_problems(fields: dict, folder: str) -> list[str]:
    """What the Agent Skills specification forbids but a lenient client loads anyway, one sentence
    each."""
    name = fields.get("name")
    problems = []
    if not isinstance(name, str) or not name:
        problems.append(f"has no usable name; its folder name {folder!r} is used")
    else:
        problems += name_problems(name, folder)
    description = fields["description"].strip()
    if len(description) > DESCRIPTION_LIMIT:
        problems.append(f"has a description of {len(description):,} characters; only the first "
                        f"{DESCRIPTION_LIMIT:,} are used")
    unknown = [str(field) for field in fields if field not in KNOWN_FIELDS]
    if unknown:
        problems.append(f"has unknown field(s) {', '.join(unknown)}; the spec knows "
                        f"{', '.join(KNOWN_FIELDS)}")
    return problems


def name_problems(name: str, folder: str) -> list[str]:
    problems = []
    if len(name) > NAME_LIMIT:
        problems.append(f"has a name of {len(name)} characters; the limit is {NAME_LIMIT}")
    if not NAME_CHARACTERS.fullmatch(name):
        problems.append(f"has the name {name!r}; use only lowercase letters, digits and hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append(f"has the name {name!r}; it must not start or end with a hyphen")
    if "--" in name:
        problems.append(f"has the name {name!r}; it must not have two hyphens in a row")
    if name != folder:
        problems.append(f"has the name {name!r}, which does not match its folder {folder!r}")
    return problems


def resource_listing(skill, list_limit: int, shell: Shell | None = None) -> list[str]:
    """The lines after a skill's instructions: its folder, and its other files, up to
    `list_limit` of them; past that, the command that lists them all in the bash tool's shell."""
    folder = tool_path(skill.folder)
    files = resource_files(skill.folder)
    if files:
        example = f"{folder}/{files[0].relative_to(skill.folder).as_posix()}"
        files_note = ("Its other files are not loaded; when the instructions call for one, read it "
                      f"with read_file at the folder plus the path listed, e.g. {example}")
    else:
        files_note = "It has no other files."
    lines = [f"Skill folder: {folder} (its SKILL.md has these instructions in full, if they were "
             f"cut above). {files_note}"]
    for path in files[:list_limit]:
        name = path.relative_to(skill.folder).as_posix()
        lines.append(f"  {name} ({path.stat().st_size:,} bytes)")
    if len(files) > list_limit:
        more = len(files) - list_limit
        shell = shell or this_platform().shell
        lines.append(f"  [{more} more; list them with bash: {list_files_command(folder, shell)}]")
    return [as_utf8(line) for line in lines]  # file names need not be UTF-8; a request must


def list_files_command(folder: str, shell: Shell) -> str:
    if shell.name == "PowerShell":
        return f"Get-ChildItem -Recurse -File -Name -LiteralPath {shell.quoted(folder)}"
    return f"find {shell.quoted(folder)} -type f"


def as_utf8(text: str) -> str:
    return text.encode("utf-8", errors="replace").decode("utf-8")


def resource_files(folder: Path) -> list[Path]:
    """A skill's files besides SKILL.md: scripts/, references/, assets/ and whatever else is
    there, unhidden, that read_file can read (a link to a file outside the folder is left out)."""
    files = []
    for path in sorted(folder.rglob("*")):
        hidden = any(part.startswith(".") for part in path.relative_to(folder).parts)
        inside = path.resolve().is_relative_to(folder)
        if path.is_file() and path != folder / "SKILL.md" and not hidden and inside:
            files.append(path)
    return files


# -- a hostile skill file cannot hang, flood or crash start-up
SKILL_FILE_LIMIT = 256 * 1024  # bytes of one SKILL.md (its body is read whole at start-up)
YAML_NODE_LIMIT = 2000  # nodes in one front matter; a few fields need far fewer


def read_skill_file(skill_md: Path) -> str:
    """A SKILL.md's text, if it is a regular file in its folder (not a link to a file elsewhere)
    of at most SKILL_FILE_LIMIT bytes: a FIFO is refused without waiting; a huge file is not read
    past the limit. Its folder may be reached through links (a skills folder linked in place)."""
    try:
        file = open_regular(skill_md.parent.resolve() / skill_md.name, os.O_RDONLY)
    except NotRegularFile as exc:
        raise SkillSkipped(f"{exc.what}; a SKILL.md must be a regular file in its skill "
                           "folder") from None
    with file:
        data = file.read(SKILL_FILE_LIMIT + 1)
    if len(data) > SKILL_FILE_LIMIT:
        raise SkillSkipped(f"is over {SKILL_FILE_LIMIT:,} bytes; put long parts in references/")
    return data.decode("utf-8-sig")


class FrontMatterLoader(yaml.SafeLoader):
    """yaml.SafeLoader without anchors and aliases (& and *), and with at most YAML_NODE_LIMIT
    nodes: a few hundred bytes of aliases, or merge keys (<<) built on them, can expand into
    millions."""

    nodes = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise yaml.YAMLError("anchors and aliases (& and *) are not allowed in front matter")
        self.nodes += 1
        if self.nodes > YAML_NODE_LIMIT:
            raise yaml.YAMLError(f"more than {YAML_NODE_LIMIT:,} YAML nodes in the front matter")
        return super().compose_node(parent, index)


def refuse_unusable_name(name: str) -> None:
    """The catalogue and the Skill tool use a name as it is, so it must be the spec's kind of word:
    no newline to inject catalogue lines, no escape codes for the terminal."""
    if not NAME_CHARACTERS.fullmatch(name):
        raise SkillSkipped(f"has the name {name!r}; use only lowercase letters, digits and "
                           "hyphens (a skill with any other name is not loaded)")


