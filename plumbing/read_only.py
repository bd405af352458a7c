"""v3+: the read-only shell's parser: one command or a pipeline, every word checked.

The parser decides what may run; plumbing/sandbox.py makes a command that got through unable to
write, reach the network or see a secret.
"""

import os
import posixpath
import re
import shlex
from pathlib import Path

from plumbing.checks import ToolError

REFUSED_TEXT = {  # looked for in the raw command line, quoted or not
    "\n": "a line break starts a second command", "\r": "a line break starts a second command",
    "`": "backticks run a command inside the command line",
    "$(": "$( ) runs a command inside the command line",
}
PROCESS_FILES = ["/proc", "/dev/fd"]  # other processes' environments; /dev/fd links into /proc
DRIVE = re.compile(r"^[A-Za-z]:")  # C:, as a Windows path starts
OPERATORS = {  # shell operators by their first character, and why each is refused (| is fine)
    ">": "> and >> write the output into a file",
    "<": "< is not supported: give the file name as an argument",
    ";": "; runs a second command", "&": "& and && run a second command",
    "|": "|| and |& run a second command",
    "(": "( ) runs commands in a subshell", ")": "( ) runs commands in a subshell",
}


def parse_read_only(command: str, commands: dict) -> list[list[str]]:
    """Split a command line into the argument lists of a pipeline; refuse whatever could change
    a file. `commands` maps each command allowed to its options that are refused."""
    for text, why in REFUSED_TEXT.items():
        if text in command:
            raise ToolError(f"refused: {why}; read_only_bash runs one command, or a pipeline "
                            "joined by |")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)  # 'a>b': a, >, b, as a shell
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        words = list(lexer)
    except ValueError as exc:  # an unclosed quote, say: what cannot be parsed is refused
        raise ToolError(f"refused: cannot parse the command ({exc})") from None
    pipeline = [[]]
    for word in words:
        if word == "|":
            pipeline.append([])
        elif word and set(word) <= set(OPERATORS):
            raise ToolError(f"refused: {OPERATORS[word[0]]} (a quoted {word!r} counts too)")
        else:
            pipeline[-1].append(word)
    for argv in pipeline:
        check_read_only(argv, commands)
    return pipeline


def check_read_only(argv: list[str], commands: dict) -> None:
    if not argv:
        raise ToolError("refused: an empty command; a | needs a command on each side")
    name = argv[0]
    if name == "git":
        name = " ".join(argv[:2])
    if name not in commands:
        raise ToolError(f"refused: {name!r} is not one of the read-only commands this tool runs: "
                        f"{', '.join(commands)}. To get a file changed, say so in your "
                        "report.")
    for word in argv[1:]:
        option = refused_option(word, commands[name])
        if option:
            raise ToolError(f"refused: {name} {option} writes files, runs a program or never ends")
    if name == "uniq" and len(uniq_file_names(argv)) > 1:
        raise ToolError("refused: uniq writes into its second file name; give it one file, or "
                        "pipe into it")


def uniq_file_names(argv: list[str]) -> list[str]:
    """uniq's file names: words that are not options, "-", and every word after "--"."""
    end = len(argv)
    if "--" in argv:
        end = argv.index("--")
    names = [word for word in argv[1:end] if word == "-" or not word.startswith("-")]
    return names + argv[end + 1:]


def refused_option(word: str, refused: list[str]) -> str | None:
    """The refused option that `word` spells, also abbreviated (--out=f) or grouped (-ro f)."""
    for option in refused:
        if option.startswith("--"):
            name = word.split("=")[0]
            spelled = len(name) > 2 and option.startswith(name)
        elif len(option) == 2:
            spelled = word.startswith("-") and not word.startswith("--") and option[1] in word[1:]
        else:  # find's single-dash words such as -delete
            spelled = word == option
        if spelled:
            return option
    return None


def refuse_process_files(pipeline: list[list[str]]) -> None:
    """Without the sandbox: refuse every word that reaches /proc as a path, where any process's
    environment can be read (/proc/<pid>/environ: a shell's, a server's; Git for Windows' tools
    have a /proc too). The same words on every OS: read as written, as Linux and as Git for
    Windows' tools would, and where their links lead; an option's value too (--file=P, -fP).
    "/" is refused too: a search through it would walk /proc."""
    for argv in pipeline:
        for word in argv[1:]:
            for path in path_spellings(word):
                if reaches_process_files(path):
                    raise ToolError(f"refused: {word!r} reaches /proc, where other processes' "
                                    "environments (and secrets) can be read; there is no "
                                    "sandbox here to keep them out of sight")


def path_spellings(word: str) -> list[str]:
    """The paths a word may name: itself, and for an option, what follows '=' or its letters."""
    spellings = [word]
    if word.startswith("-"):
        spellings.append(word.partition("=")[2])
    if word.startswith("-") and not word.startswith("--"):
        spellings += [word[index:] for index in range(2, len(word))]
    return [spelling for spelling in spellings if spelling]


def reaches_process_files(path: str) -> bool:
    """Whether `path` names "/" or a place under /proc or /dev/fd (a link into /proc): as
    written, as a POSIX tool reads it (Git for Windows' tools too, for which .. climbs from C:/
    to Git's own root, which has the /proc), or where its links lead. A path from a drive with
    a folder proc in it may be Git's /proc as Windows spells it (C:/Program Files/Git/proc)."""
    if is_process_path(as_written(path)) or is_process_path(os.path.realpath(path)):
        return True
    return bool(DRIVE.match(path)) and "proc" in re.split(r"[\\/]", path.lower())


def as_written(path: str) -> str:
    """The path from the root as text: \\ read as /, a relative path joined to the work folder,
    . and .. taken away, in lower case (Windows' names are). C:/x is read as /C:/x, which climbs
    to / with .. as MSYS2's /c/x does."""
    path = path.replace("\\", "/")
    if not path.startswith("/") and not DRIVE.match(path):
        path = Path.cwd().as_posix() + "/" + path
    return posixpath.normpath("/" + path.lstrip("/")).lower()


def is_process_path(path: str) -> bool:
    path = path.replace("\\", "/")
    return path == "/" or any(path == place or path.startswith(place + "/")
                              for place in PROCESS_FILES)
