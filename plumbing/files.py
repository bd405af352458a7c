"""Paths inside the work directory, text files, line endings and matches; the file tools open
regular files only, and never through a link swapped in after the check."""

import errno
import os
import re
import stat
from pathlib import Path

from plumbing.checks import ToolError

def workdir_path(path: str) -> Path:
    """The full path of `path`, which must lie inside the work directory."""
    root = Path.cwd().resolve()
    full = (root / path).resolve()  # resolve() follows links, so a link pointing out is caught too
    if not full.is_relative_to(root):
        raise ToolError(f"{path!r} is outside the work directory; use a path inside {root}")
    return full


def read_lines(path: Path, offset: int, limit: int,
               line_limit: int) -> tuple[list[str], int]:
    """Up to `limit` lines of a text file from line `offset`, each cut at line_limit characters,
    and how many lines the file has. A binary file is refused. Only the lines shown are kept, and
    only their first line_limit characters: a huge file costs no more memory than a small one."""
    with open_regular(path, os.O_RDONLY) as file:
        if b"\0" in file.read(8192):
            size = os.fstat(file.fileno()).st_size
            raise ToolError(f"{path.name} looks binary ({size:,} bytes); read_file shows text. "
                            "Try bash: file, xxd | head")
        file.seek(0)
        page, total = [], 0
        while total < offset - 1 + limit:
            line = line_start(file, line_limit)
            if line is None:
                return [cut_line(line, line_limit) for line in page], total
            total += 1
            if total >= offset:
                page.append(line.decode("utf-8", errors="replace").rstrip("\r\n"))
        return [cut_line(line, line_limit) for line in page], total + count_lines(file)


def cut_line(line: str, line_limit: int) -> str:
    if len(line) <= line_limit:
        return line
    return line[:line_limit] + " [line cut]"


def line_start(file, line_limit: int) -> bytes | None:
    """The next line's first bytes, enough for more than line_limit characters (so cut_line sees
    that it goes on); the rest of a longer line is skipped unread. None at the end of the file."""
    line = file.readline(line_limit * 4 + 4)
    if not line:
        return None
    rest = line
    while rest and not rest.endswith(b"\n"):
        rest = file.readline(1 << 16)
    return line


def count_lines(file) -> int:
    """The lines left in a file, counted a chunk at a time."""
    count, last = 0, b"\n"
    chunk = file.read(1 << 20)
    while chunk:
        count, last = count + chunk.count(b"\n"), chunk[-1:]
        chunk = file.read(1 << 20)
    return count + (last != b"\n")


def page_note(path: str, offset: int, shown: int, total: int) -> list[str]:
    """read_file's last line, when there is more to read (so the model can page on), or nothing
    was shown."""
    last = offset - 1 + shown
    if last < total:
        more = f"call read_file with offset={last + 1} for more"
        return [f"[lines {offset}-{last} of {total}; {more}]"]
    if shown == 0:
        return [f"[{path} has {total} lines; nothing from line {offset}]"]
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
NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # not on Windows; the checks after opening still hold
NO_BLOCK = getattr(os, "O_NONBLOCK", 0)


def open_regular(path: Path, flags: int, mode: str = "rb", newline: str | None = None):
    """Open a file the tools may use. workdir_path() resolved `path`, so a symlink in its last part
    now means it was swapped in after the check: O_NOFOLLOW refuses it. O_NONBLOCK: a FIFO cannot
    make us wait. Then only a regular file, and for writing, one with no other name (hard link)."""
    try:
        fd = os.open(path, flags | NO_FOLLOW | NO_BLOCK, 0o666)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):  # a link swapped in; a FIFO nobody reads
            raise ToolError(f"{path.name} is not a regular file; refused") from None
        raise
    try:
        check_opened(path, os.fstat(fd), writing=flags != os.O_RDONLY)
        os.set_blocking(fd, True)
        encoding = None if "b" in mode else "utf-8"
        return os.fdopen(fd, mode, encoding=encoding, newline=newline)
    except BaseException:
        os.close(fd)
        raise


def check_opened(path: Path, info: os.stat_result, writing: bool) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{path.name} is not a regular file (a FIFO, a device, ...); the file "
                        "tools read and write regular files only")
    if writing and info.st_nlink > 1:
        raise ToolError(f"{path.name} has {info.st_nlink} names (hard links); writing would change "
                        "the file under its other names too, maybe outside the work directory")


def read_text_file(path: Path) -> str:
    """A regular file's text as it is on disk: no line-ending translation."""
    with open_regular(path, os.O_RDONLY) as file:
        if os.fstat(file.fileno()).st_size > EDIT_LIMIT:
            raise ToolError(f"{path.name} is over {EDIT_LIMIT:,} bytes; edit it with bash (sed)")
        return file.read().decode("utf-8")


def write_text_file(path: Path, text: str, newline: str | None = None) -> None:
    """Create or overwrite; cut to nothing only after open_regular's checks passed."""
    with open_regular(path, os.O_WRONLY | os.O_CREAT, "w", newline) as file:
        file.truncate(0)
        file.write(text)


