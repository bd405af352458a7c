"""v3+: read-only at the OS level too: bubblewrap where it runs, else parsing only.

The parser (plumbing/read_only.py) decides what may run; the sandbox makes a command that got
through unable to write, reach the network, see the API key or read outside the work directory.
Both modes: a cleared environment, git without the settings that run programs (its filter and
diff drivers included), a memory limit. With parsing only, nothing under /proc may be named.
"""

import functools
import glob
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from plumbing.checks import ToolError
from plumbing.commands import run_command
from plumbing.read_only import refuse_process_files
from plumbing.screen import Screen

READ_ONLY_MEMORY_KB = 1024 * 1024  # address space of each command: tail /dev/zero stops at 1 GiB
SANDBOX_TMP_BYTES = 64 * 1024 * 1024  # the sandbox's private /tmp, thrown away after each command
SANDBOX_PROCESSES = 256  # processes and threads in the sandbox (rg and git grep run threads)
GIT_SAFE_CONFIG = [  # -c beats the repository's .git/config, which an untrusted repo can fill
    "core.fsmonitor=false", "diff.external=", "log.showSignature=false", "gpg.program=false",
    "gpg.ssh.program=false", "gpg.x509.program=false", "protocol.allow=never", "gc.auto=0",
    "maintenance.auto=false", "core.pager=cat",
    "diff.autoRefreshIndex=false"]  # git diff would rewrite .git/index, optional locks or not
# A driver is named in .gitattributes and defined in .git/config; -c cannot match every name, so
# run_read_only() lists the names first and empties each of these settings for them.
GIT_DRIVER_SETTINGS = {"filter": {"clean": "", "smudge": "", "process": "", "required": "false"},
                       "diff": {"textconv": "", "command": ""}}  # an empty program is no program
# --ignore-submodules: no git run inside a submodule, whose own config names its own drivers
GIT_NO_PROGRAM_FLAGS = {"log": ["--no-ext-diff", "--no-textconv", "--ignore-submodules"],
                        "diff": ["--no-ext-diff", "--no-textconv", "--ignore-submodules"],
                        "show": ["--no-ext-diff", "--no-textconv", "--ignore-submodules"],
                        "status": ["--ignore-submodules"], "blame": ["--no-textconv"]}
GIT_FLAGS_FIRST = {"grep": ["--no-textconv"]}  # git grep takes options before its pattern only
READ_ONLY_ENV = {  # all a read-only command gets: no API key; git neither locks nor fetches
    "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
    "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat", "PAGER": "cat", "GIT_CONFIG_NOSYSTEM": "1"}
# What the sandbox shows besides the work directory: programs, libraries and the few files of /etc
# they read (all of /etc would include /etc/shadow, readable when the agent runs as root).
SANDBOX_SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/passwd",
                  "/etc/group", "/etc/nsswitch.conf", "/etc/ld.so.cache", "/etc/localtime",
                  "/etc/alternatives", "/etc/magic", "/etc/magic.mime"]


def without_git_programs(argv: list[str], drivers: list[str]) -> list[str]:
    """git with GIT_SAFE_CONFIG and every driver's programs emptied, and its no-program flags last
    (before any --), so they win over a --textconv of the model's; git grep's go first, where it
    takes them, and a --textconv after them finds no program to run."""
    if argv[0] != "git":
        return argv
    config = []
    for setting in [*GIT_SAFE_CONFIG, *drivers]:
        config += ["-c", setting]
    words = argv[2:]
    end = words.index("--") if "--" in words else len(words)
    first = GIT_FLAGS_FIRST.get(argv[1], [])
    last = GIT_NO_PROGRAM_FLAGS.get(argv[1], [])
    return ["git", *config, argv[1], *first, *words[:end], *last, *words[end:]]


def git_driver_settings(names: str) -> list[str]:
    """The -c settings that switch off the drivers whose settings `git config -z --name-only`
    listed (filter.NAME.clean, ...). A NAME with '=' cannot be written as -c, nor one that is not
    UTF-8 (it was decoded with replacement characters): either is refused."""
    settings = []
    for name in names.split("\0"):
        kind, _, rest = name.partition(".")
        driver = rest.rpartition(".")[0]
        if kind not in GIT_DRIVER_SETTINGS or not driver:
            continue
        if "=" in driver or "\ufffd" in driver:
            raise ToolError(f"refused: this repository's git config names a {kind} driver "
                            f"{driver!r}, which cannot be switched off safely")
        for setting, value in GIT_DRIVER_SETTINGS[kind].items():
            settings.append(f"{kind}.{driver}.{setting}={value}")
    return list(dict.fromkeys(settings))  # each setting once, in order


def sandbox_argv(workdir: Path) -> list[str]:
    """Read-only system folders and work directory, a private /tmp, no network. In its own PID
    namespace: when the command ends or is killed, every process it left is killed with it."""
    argv = [shutil.which("bwrap") or "bwrap", "--die-with-parent", "--new-session",
            "--unshare-pid", "--unshare-net",
            "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL", "--clearenv", "--dev", "/dev",
            "--remount-ro", "/dev",  # the device nodes stay usable (/dev/null); nothing is added
            "--proc", "/proc", "--size", str(SANDBOX_TMP_BYTES), "--tmpfs", "/tmp"]
    for path in SANDBOX_SYSTEM:
        argv += ["--ro-bind-try", path, path]
    argv += ["--ro-bind", str(workdir), str(workdir), "--chdir", str(workdir)]
    argv += ["--remount-ro", "/"]  # bwrap's own root folder, where the mount points were made
    for name, value in {**READ_ONLY_ENV, "HOME": "/tmp", "TMPDIR": "/tmp"}.items():
        argv += ["--setenv", name, value]
    return argv


def run_read_only(pipeline: list[list[str]], timeout: float,
                  stopped: threading.Event) -> tuple[str, int]:
    """Run a checked pipeline read-only: in bubblewrap where it starts, else with a cleared
    environment and a private temp folder, removed when the command ends. git first lists the
    repository's drivers (a listing runs none), so that the command can switch each one off."""
    if not sandbox_ready():
        refuse_process_files(pipeline)  # /proc/<pid>/environ: other processes' secrets
    with tempfile.TemporaryDirectory(prefix=private_prefix()) as private:
        drivers = []
        if any(argv[0] == "git" for argv in pipeline):
            drivers = git_drivers(private, timeout, stopped)
        command = as_command_line(pipeline, private, drivers)
        return run_command(command, timeout, stopped, env=launcher_environment())


def git_drivers(private: str, timeout: float, stopped: threading.Event) -> list[str]:
    """The settings that switch off the filter and diff drivers of the repository's config."""
    listing = ["git", "config", "-z", "--name-only", "--get-regexp", r"^(filter|diff)\."]
    command = as_command_line([listing], private, [])
    output, exit_code = run_command(command, timeout, stopped, env=launcher_environment())
    if exit_code == 1:  # no such setting, or not in a repository
        return []
    if exit_code != 0:
        raise ToolError(f"refused: git could not list this repository's drivers to switch them "
                        f"off: {output}")
    return git_driver_settings(output)


def as_command_line(pipeline: list[list[str]], private: str, drivers: list[str]) -> str:
    """The checked words, quoted again so no shell can turn them into globs or substitutions;
    git with its program-running features off, a memory limit, and the OS sandbox with a limit
    on processes too (dash calls it ulimit -p, bash -u)."""
    commands = [shlex.join(without_git_programs(argv, drivers)) for argv in pipeline]
    limits = f"ulimit -v {READ_ONLY_MEMORY_KB} 2>/dev/null; "
    if sandbox_ready():
        processes = f"ulimit -u {SANDBOX_PROCESSES} || ulimit -p {SANDBOX_PROCESSES}"
        limits += "{ " + processes + "; } 2>/dev/null; "
    script = limits + " | ".join(commands)
    return "exec " + shlex.join([*read_only_launcher(private), "/bin/sh", "-c", script])


def private_prefix() -> str:
    """The name of this process's private temp folders: leave() finds them if a subagent's thread
    did not get to remove its own before the agent exited."""
    return f"read-only-{os.getpid()}-"


def remove_private_folders() -> None:
    for folder in glob.glob(os.path.join(tempfile.gettempdir(), private_prefix() + "*")):
        shutil.rmtree(folder, ignore_errors=True)


def read_only_launcher(private: str) -> list[str]:
    """The words that start a read-only command: bwrap's, or env -i's with a private temp folder."""
    if sandbox_ready():
        return [*sandbox_argv(Path.cwd().resolve()), "--"]
    env = {**READ_ONLY_ENV, "HOME": private, "TMPDIR": private}
    return ["/usr/bin/env", "-i", *[f"{name}={value}" for name, value in env.items()]]


def launcher_environment() -> dict:
    """What bwrap (or env -i) itself starts with. With --unshare-pid, bwrap is PID 1 in the
    sandbox and /proc/1/environ shows its environment, so it gets no secret either."""
    return dict(READ_ONLY_ENV)


def sandbox_ready() -> bool:
    """Whether bubblewrap is here and starts (user namespaces may be off)."""
    return bwrap_starts(shutil.which("bwrap"))


@functools.cache
def bwrap_starts(bwrap: str | None) -> bool:
    """Tried once per bwrap program: a test or a user with another PATH gets its own answer."""
    if bwrap is None:
        return False
    probe = subprocess.run([*sandbox_argv(Path.cwd().resolve()), "--", "true"],
                           capture_output=True, timeout=30, check=False, env=launcher_environment())
    return probe.returncode == 0


def note_if_parsing_only(screen: Screen) -> None:
    if not sandbox_ready():
        screen.note("read_only_bash: read-only is enforced by parsing only here (bubblewrap is "
                    "missing or cannot start); the parser still refuses anything that writes")
