"""Paths inside the work directory, text files, line endings and matches; the file tools open
regular files only, and never through a link swapped in after the check."""

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from plumbing.checks import ToolError
from plumbing.platforms import Platform, this_platform

COUNT_LIMIT = 16 * 1024 * 1024  # bytes after a page that read_file reads to count the lines


def workdir_path(path: str) -> Path:
    """The full path of `path`, which must lie inside the work directory."""
    root = Path.cwd().resolve()
    full = (root / path).resolve()  # resolve() follows links, so a link pointing out is caught too
    if not full.is_relative_to(root):
        raise ToolError(f"{path!r} is outside the work directory; use a path inside {root}")
    return full


@dataclass
class LineCount:
    """How many lines a file has, or, when counting them all would read too much, at least how
    many."""
    lines: int
    complete: bool


def read_lines(path: Path, offset: int, limit: int, line_limit: int,
               platform: Platform | None = None) -> tuple[list[str], LineCount]:
    """Up to `limit` lines of a text file from line `offset`, each cut at line_limit characters,
    and how many lines the file has. A binary file is refused. Only the lines shown are kept, and
    only their first line_limit characters: a huge file costs no more memory than a small one.
    The lines after the page are counted for COUNT_LIMIT bytes at most: a huge file costs no more
    time than its page, and the count then says "at least"."""
    with open_regular(path, os.O_RDONLY, platform=platform) as file:
        if b"\0" in file.read(8192):
            size = os.fstat(file.fileno()).st_size
            raise ToolError(f"{path.name} looks binary ({size:,} bytes); read_file shows text. "
                            + in_the_shell(platform, "Try bash: file, xxd | head",
                                           "Try the bash tool (PowerShell here): Format-Hex "
                                           "-Path FILE | Select-Object -First 20"))
        file.seek(0)
        page, number, start = [], 0, b"\n"
        last = offset - 1 + limit
        while number < last:
            start = file.readline(line_limit * 4 + 4)  # enough to see that a line goes on
            if not start:
                return cut_lines(page, line_limit), LineCount(number, complete=True)
            number += 1
            if number >= offset:
                page.append(start.decode("utf-8", errors="replace").rstrip("\r\n"))
            if number < last:
                skip_rest_of_line(file, start)
        unfinished = not start.endswith(b"\n")  # the rest of the page's last line is not read
        return cut_lines(page, line_limit), count_rest(file, number - unfinished, start[-1:])


def cut_lines(lines: list[str], line_limit: int) -> list[str]:
    return [cut_line(line, line_limit) for line in lines]


def cut_line(line: str, line_limit: int) -> str:
    if len(line) <= line_limit:
        return line
    return line[:line_limit] + " [line cut]"


def skip_rest_of_line(file, start: bytes) -> None:
    """Read past the end of a line whose start was read, without keeping it."""
    rest = start
    while rest and not rest.endswith(b"\n"):
        rest = file.readline(1 << 16)


def count_rest(file, counted: int, last: bytes) -> LineCount:
    """`counted` lines, plus those in the rest of the file, for COUNT_LIMIT bytes at most. `last`
    is the byte before the rest: not a newline when the rest starts in the middle of a line."""
    budget = COUNT_LIMIT
    chunk = file.read(1 << 20)
    while chunk:
        counted += chunk.count(b"\n")
        last = chunk[-1:]
        budget -= len(chunk)
        if budget <= 0 and file.read(1):  # more left than the budget: a line at least
            return LineCount(counted + 1, complete=False)
        chunk = file.read(1 << 20)
    return LineCount(counted + (last != b"\n"), complete=True)


def page_note(path: str, offset: int, shown: int, total: LineCount) -> list[str]:
    """read_file's last line, when there is more to read (so the model can page on), or nothing
    was shown."""
    last = offset - 1 + shown
    more = f"call read_file with offset={last + 1} for more"
    if not total.complete:
        return [f"[lines {offset}-{last} of at least {total.lines:,}; the rest of the file was not "
                f"counted; {more}]"]
    if last < total.lines:
        return [f"[lines {offset}-{last} of {total.lines}; {more}]"]
    if shown == 0:
        return [f"[{path} has {total.lines} lines; nothing from line {offset}]"]
    return []


def match_line_endings(text: str, old_text: str, new_text: str) -> tuple[str, str]:
    """read_file shows lines without their \\r. If old_text only matches a \\r\\n file with
    \\r\\n endings, give both texts \\r\\n endings."""
    if "\r\n" not in text or old_text in text:
        return old_text, new_text
    return with_crlf(old_text), with_crlf(new_text)


def with_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def count_matches(text: str, old_text: str) -> int:
    """How many places old_text matches, overlapping ones included (two in '}}}' for '}}')."""
    return len(re.findall(f"(?={re.escape(old_text)})", text))


def edit_hint(matches: int) -> str:
    if matches == 0:
        return "read the file and copy the text exactly"
    return "add nearby lines so it matches one"




EDIT_LIMIT = 64 * 1024 * 1024  # bytes edit_file reads whole; a bigger file is edited with bash
SWAPPED = (errno.ELOOP, errno.ENOTDIR)  # what opening a link as a folder, without following, says
LINK = "is a symbolic link"  # what NotRegularFile says a path is
NOT_REGULAR = "is not a regular file (a FIFO, a device, ...)"


class NotRegularFile(ToolError):
    """A link, a FIFO or a device where a regular file was expected; `what` says which (LINK or
    NOT_REGULAR), so that a caller (skills.py) can word its own message."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(f"{path.name} {what}; the file tools read and write regular files only")
        self.what = what


def open_regular(path: Path, flags: int, mode: str = "rb", newline: str | None = None,
                 platform: Platform | None = None):
    """Open a file the tools may use: in binary mode (no line ending is translated), a regular
    file, and for writing, one with no other name (hard link). workdir_path() resolved `path`, so
    none of its parts is a link now: a link swapped in after the check, for the file or for any
    folder above it, is refused. Missing folders are made on the way when writing. How, depends
    on what the OS offers (`platform`): see open_through_no_link() and open_by_name()."""
    platform = platform or this_platform()
    writing = flags != os.O_RDONLY
    flags |= platform.binary | platform.no_follow | platform.no_block
    try:
        if platform.folder_descriptors:
            fd = open_through_no_link(path, flags, writing, platform.folder)
        else:
            fd = open_by_name(path, flags, writing)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link swapped in
            raise NotRegularFile(path, LINK) from None
        if exc.errno == errno.ENXIO:  # O_NONBLOCK met a FIFO that nobody reads
            raise NotRegularFile(path, NOT_REGULAR) from None
        raise
    try:
        opened = os.fstat(fd)
        check_opened(path, opened, writing)
        if not platform.folder_descriptors:
            check_same_file(path, opened)
        if platform.no_block:  # a regular file: reads and writes may wait after all
            os.set_blocking(fd, True)
        encoding = None if "b" in mode else "utf-8"
        return os.fdopen(fd, mode, encoding=encoding, newline=newline)
    except BaseException:
        os.close(fd)
        raise


def open_through_no_link(path: Path, flags: int, create_folders: bool, folder_flags: int) -> int:
    """os.open(path) with O_NOFOLLOW and O_NONBLOCK (Linux, macOS): from a descriptor of its
    folder, opened one part at a time from the root, through no link; a FIFO cannot make us
    wait."""
    path = Path(os.path.abspath(path))
    folder = open_folder(path, create_folders, folder_flags)
    try:
        return os.open(path.name, flags, 0o666, dir_fd=folder)
    except OSError as exc:
        raise with_path(exc, path) from None
    finally:
        os.close(folder)


def open_by_name(path: Path, flags: int, create_folders: bool) -> int:
    """os.open(path) where there are no folder descriptors, no O_NOFOLLOW and no O_NONBLOCK
    (Windows): looked at first, a link, a FIFO, a device or a folder that became a link is
    refused unopened (a FIFO would make the open wait); check_same_file() looks again after."""
    path = Path(os.path.abspath(path))
    refuse_linked_folder(path)
    if create_folders:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        info = os.lstat(path)
    except FileNotFoundError:  # to be made, or not there: os.open says which
        return os.open(path, flags, 0o666)
    if stat.S_ISLNK(info.st_mode):
        raise NotRegularFile(path, LINK)
    check_opened(path, info, writing=False)
    return os.open(path, flags, 0o666)


def check_same_file(path: Path, opened: os.stat_result) -> None:
    """After open_by_name(): the file opened is the one at `path`, through no link."""
    refuse_linked_folder(Path(os.path.abspath(path)))
    now = os.lstat(path)
    if stat.S_ISLNK(now.st_mode):
        raise NotRegularFile(path, LINK)
    if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
        raise ToolError(f"{path.name} was replaced while it was being opened; refused")


def refuse_linked_folder(path: Path) -> None:
    """No folder on the way to `path` is a link (or a Windows junction) now; those still to be
    made are not looked at."""
    real = os.path.normcase(os.path.realpath(path.parent))
    if real != os.path.normcase(path.parent):
        raise ToolError(f"{path} is reached through a link put in place of a folder after the "
                        "check; refused")


def open_folder(path: Path, create: bool, folder_flags: int) -> int:
    """A descriptor of the folder of `path`, through no link; missing folders are made if
    `create`."""
    fd = os.open(path.anchor, folder_flags)
    try:
        for part in path.parent.parts[1:]:
            inner = open_part(fd, part, create, path, folder_flags)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_part(fd: int, part: str, create: bool, path: Path, folder_flags: int) -> int:
    """The folder `part` inside the folder open as `fd`; errors name `path`, the file."""
    try:
        return os.open(part, folder_flags, dir_fd=fd)
    except FileNotFoundError as exc:
        if not create:
            raise with_path(exc, path) from None
    except OSError as exc:
        if exc.errno in SWAPPED and stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
            raise ToolError(f"{path} is reached through a link put in place of a folder after "
                            "the check; refused") from None
        raise with_path(exc, path) from None
    try:
        os.mkdir(part, dir_fd=fd)
    except FileExistsError:  # made meanwhile, maybe as a link: opening it again tells
        pass
    return open_part(fd, part, False, path, folder_flags)


def with_path(exc: OSError, path: Path) -> OSError:
    """The same error, naming the whole path rather than the part that was opened last."""
    return type(exc)(exc.errno, exc.strerror, str(path))


def check_opened(path: Path, info: os.stat_result, writing: bool) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFile(path, NOT_REGULAR)
    if writing and info.st_nlink > 1:
        raise ToolError(f"{path.name} has {info.st_nlink} names (hard links); writing would change "
                        "the file under its other names too, maybe outside the work directory")


def read_text_file(path: Path, platform: Platform | None = None) -> str:
    """A regular file's text as it is on disk: no line-ending translation."""
    with open_regular(path, os.O_RDONLY, platform=platform) as file:
        if os.fstat(file.fileno()).st_size > EDIT_LIMIT:
            raise ToolError(f"{path.name} is over {EDIT_LIMIT:,} bytes; " + in_the_shell(
                platform, "edit it with bash (sed)", "edit it with the bash tool (PowerShell "
                "here: Get-Content, -replace, Set-Content to a new file, then Move-Item)"))
        return file.read().decode("utf-8")


def in_the_shell(platform: Platform | None, posix: str, powershell: str) -> str:
    """Advice that names commands the bash tool can run: its shell is PowerShell on a Windows
    without Git for Windows, where sed, file and xxd do not exist."""
    shell = (platform or this_platform()).shell.name
    return powershell if shell == "PowerShell" else posix


def write_text_file(path: Path, text: str, newline: str | None = "",
                    platform: Platform | None = None) -> None:
    """Create or overwrite, making missing folders; cut to nothing only after open_regular's
    checks passed. By default the text is written as it is, \n and \r\n alike, on every OS
    (newline=None would write each \n as the OS's line ending: \r\n on Windows)."""
    with open_regular(path, os.O_WRONLY | os.O_CREAT, "w", newline, platform) as file:
        file.truncate(0)
        file.write(text)


