"""v3+: read-only at the OS level too: bubblewrap on Linux, Seatbelt on macOS, else parsing only.

The parser (plumbing/read_only.py) decides what may run; the sandbox makes a command that got
through unable to write or reach the network. bubblewrap (Linux) also hides the API key and
everything outside the work directory; Seatbelt (macOS, `sandbox-exec`) denies writes outside a
private temp folder. Windows has no sandbox a program can start: there the parser alone decides,
and each program is the POSIX tool (Git for Windows'), never Windows' own of the same name. On
every OS the agent starts each program of a pipeline itself and joins them with pipes: no shell
reads the checked words. In every mode: a cleared environment, git without the settings that
run programs (its filter and diff drivers included), and a memory limit where the OS can set
one. With parsing only, no word may name /proc, on any OS.
"""

import functools
import glob
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from plumbing.checks import ToolError
from plumbing.commands import run_pipeline
from plumbing.platforms import Platform, linux, this_platform
from plumbing.read_only import refuse_process_files
from plumbing.screen import Screen

READ_ONLY_MEMORY_KB = 1024 * 1024  # address space of each command: tail /dev/zero stops at 1 GiB
SANDBOX_TMP_BYTES = 64 * 1024 * 1024  # the sandbox's private /tmp, thrown away after each command
SANDBOX_PROCESSES = 256  # processes and threads in the sandbox (rg and git grep run threads)
SANDBOX_START_WAIT = 30  # seconds the sandbox may take to run `true` once, at start-up
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
# What a read-only command gets, with PATH and the locale: no API key; git neither locks nor
# fetches. git reads the system's config, as the user's git does: Git for Windows sets
# core.autocrlf=true there, and without it a checkout with \r\n would show every text file
# changed (GIT_SAFE_CONFIG still wins).
READ_ONLY_ENV = {
    "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat", "PAGER": "cat"}
# What a Windows program needs of the environment to start (Python's subprocess docs: an env
# without a valid SystemRoot cannot start some programs); none of them holds a secret.
WINDOWS_ENV = ["SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT"]
WINDOWS_PROGRAMS = [".exe", ".com"]  # what CreateProcess starts itself, with no cmd.exe between
PROTECTIONS = {  # what the start-up note says is in force, by the OS sandbox that runs
    "bubblewrap": "the parser, then bubblewrap: no writes, no network, nothing outside the work "
                  "directory",
    "sandbox-exec": "the parser, then Seatbelt (sandbox-exec): no writes, no network",
    "": "parsing only here ({why}); the parser still refuses anything that writes"}
WHY_PARSING_ONLY = {"bubblewrap": "bubblewrap is missing or cannot start",
                    "sandbox-exec": "sandbox-exec is missing or cannot start",
                    "": "this OS has no sandbox a program can start"}
# Seatbelt's profile (SBPL), one rule a line. Nothing is allowed but what a rule allows (the
# profile Claude Code's and Codex's sandboxes start from too): so no network, no file write, and
# no message to a system service (`defaults write`, `open` and launchctl write through those).
# A read-only command needs to start programs, read files and settings, read the kernel's
# description of the machine (no kern.proc or kern.procargs: other processes' arguments and
# environments), look up user names (ls -l, git), and write to /dev/null and to its private
# temp folder, given on the command line as -D PRIVATE=...
SEATBELT_RULES = [
    "(version 1)",
    "(deny default)",
    "(allow process-exec)",
    "(allow process-fork)",
    "(allow signal (target same-sandbox))",
    "(allow process-info* (target same-sandbox))",
    "(allow file-read*)",
    "(allow user-preference-read)",
    '(allow sysctl-read (sysctl-name-prefix "hw.") (sysctl-name-prefix "machdep.cpu.") '
    '(sysctl-name "kern.argmax") (sysctl-name "kern.hostname") '
    '(sysctl-name "kern.maxfilesperproc") (sysctl-name "kern.osproductversion") '
    '(sysctl-name "kern.osrelease") (sysctl-name "kern.ostype") (sysctl-name "kern.osversion") '
    '(sysctl-name "kern.osvariant_status") (sysctl-name "kern.secure_kernel") '
    '(sysctl-name "kern.usrstack64") (sysctl-name "kern.version") '
    '(sysctl-name "sysctl.proc_cputype"))',
    '(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))',
    '(allow file-write-data (literal "/dev/null"))',
    '(allow file-write* (subpath (param "PRIVATE")))',
]
SEATBELT_PROFILE = "\n".join(SEATBELT_RULES) + "\n"
# sandbox-exec writes this line to the error output of every command it starts (macOS 15 and
# later): it says nothing about the command, so it is kept out of the result.
SEATBELT_WARNING = "WARNING: sandbox-exec is deprecated. Consider adopting the App Sandbox instead."
# The one shell script a read-only command is started with: fixed text that sets the limits,
# then `exec "$@"`, which runs the checked words as they are (a shell never parses its
# positional parameters again). In bubblewrap a limit on processes too (dash: ulimit -p,
# bash: -u).
LIMITS_SCRIPT = f'ulimit -v {READ_ONLY_MEMORY_KB} 2>/dev/null; exec "$@"'
PROCESS_LIMIT = f"ulimit -u {SANDBOX_PROCESSES} || ulimit -p {SANDBOX_PROCESSES}"
SANDBOX_LIMITS_SCRIPT = (f"ulimit -v {READ_ONLY_MEMORY_KB} 2>/dev/null; "
                         + "{ " + PROCESS_LIMIT + '; } 2>/dev/null; exec "$@"')
# What the sandbox shows besides the work directory: programs, libraries and the few files of /etc
# they read (all of /etc would include /etc/shadow, readable when the agent runs as root).
SANDBOX_SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/passwd",
                  "/etc/group", "/etc/nsswitch.conf", "/etc/ld.so.cache", "/etc/localtime",
                  "/etc/alternatives", "/etc/magic", "/etc/magic.mime", "/etc/gitconfig"]


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
    argv = [sandbox_program("bwrap") or "bwrap", "--die-with-parent", "--new-session",
            "--unshare-pid", "--unshare-net",
            "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL", "--clearenv", "--dev", "/dev",
            "--remount-ro", "/dev",  # the device nodes stay usable (/dev/null); nothing is added
            "--proc", "/proc", "--size", str(SANDBOX_TMP_BYTES), "--tmpfs", "/tmp"]
    for path in SANDBOX_SYSTEM:
        argv += ["--ro-bind-try", path, path]
    argv += ["--ro-bind", str(workdir), str(workdir), "--chdir", str(workdir)]
    argv += ["--remount-ro", "/"]  # bwrap's own root folder, where the mount points were made
    inside = {**READ_ONLY_ENV, **locale_of(linux()), "PATH": read_only_path(), "HOME": "/tmp",
              "TMPDIR": "/tmp"}
    for name, value in inside.items():
        argv += ["--setenv", name, value]
    return argv


def run_read_only(pipeline: list[list[str]], timeout: float, stopped: threading.Event,
                  platform: Platform | None = None) -> tuple[str, int]:
    """Run a checked pipeline read-only: in the OS sandbox where one starts, else with the parser
    alone; always with a cleared environment and a private temp folder, removed when the command
    ends. git first lists the repository's drivers (a listing runs none), so that the command can
    switch each one off."""
    if platform is None:
        platform = this_platform()
    sandbox = read_only_sandbox(platform)
    if not sandbox:
        refuse_process_files(pipeline)  # /proc/<pid>/environ: other processes' secrets
    with tempfile.TemporaryDirectory(prefix=private_prefix()) as private:
        drivers = []
        if any(argv[0] == "git" for argv in pipeline):
            drivers = git_drivers(private, sandbox, timeout, stopped, platform)
        return run_stages(read_only_stages(pipeline, private, drivers, sandbox, platform),
                          timeout, stopped, private, platform)


def run_stages(stages: list, timeout: float, stopped: threading.Event, private: str,
               platform: Platform) -> tuple[str, int]:
    """run_pipeline with the read-only environment, and without sandbox-exec's warning."""
    env = launcher_environment(private, platform)
    try:
        output, exit_code = run_pipeline(stages, timeout, stopped, env=env, platform=platform)
    except ToolError as stopped_early:
        raise ToolError(without_seatbelt_warning(str(stopped_early))) from None
    return without_seatbelt_warning(output), exit_code


def without_seatbelt_warning(output: str) -> str:
    return "\n".join(line for line in output.split("\n") if line != SEATBELT_WARNING)


def git_drivers(private: str, sandbox: str, timeout: float, stopped: threading.Event,
                platform: Platform) -> list[str]:
    """The settings that switch off the filter and diff drivers of the repository's config."""
    listing = ["git", "config", "-z", "--name-only", "--get-regexp", r"^(filter|diff)\."]
    stages = read_only_stages([listing], private, [], sandbox, platform)
    output, exit_code = run_stages(stages, timeout, stopped, private, platform)
    if exit_code == 1:  # no such setting, or not in a repository
        return []
    if exit_code != 0:
        raise ToolError(f"refused: git could not list this repository's drivers to switch them "
                        f"off: {output}")
    return git_driver_settings(output)


def read_only_stages(pipeline: list[list[str]], private: str, drivers: list[str], sandbox: str,
                     platform: Platform) -> list:
    """What starts each command of the pipeline: git with its program-running features off. On
    Windows, the command line of the POSIX tool, named by its full path (windows_program). On
    Linux and macOS, sh running LIMITS_SCRIPT with the checked words after it, in the sandbox
    where one starts: the words are passed on as they are, never as shell text."""
    commands = [without_git_programs(argv, drivers) for argv in pipeline]
    if platform.name == "windows":
        return [windows_command_line([windows_program(argv[0], platform), *argv[1:]])
                for argv in commands]
    launcher, script = [], LIMITS_SCRIPT
    if sandbox == "bubblewrap":
        launcher, script = [*sandbox_argv(Path.cwd().resolve()), "--"], SANDBOX_LIMITS_SCRIPT
    elif sandbox == "sandbox-exec":
        launcher = seatbelt_argv(sandbox_program("sandbox-exec") or "sandbox-exec", private)
    return [[*launcher, "/bin/sh", "-c", script, "sh", *argv] for argv in commands]


def seatbelt_argv(sandbox_exec: str, private: str) -> list[str]:
    """macOS: sandbox-exec with SEATBELT_PROFILE. Seatbelt compares real paths (/var/folders is
    /private/var/folders), so the private folder is given resolved."""
    return [sandbox_exec, "-p", SEATBELT_PROFILE, "-D", f"PRIVATE={os.path.realpath(private)}"]


def windows_command_line(argv: list[str]) -> str:
    """The command line a Windows program is started with (Windows passes a program one line,
    which it splits itself): each word in double quotes. Two ways of splitting read it, word for
    word the same: the C runtime's (git.exe, rg.exe) and MSYS2's (Git's usr/bin tools), which
    expands no glob, no ~ and no @file in a quoted word. The words they would read differently
    are refused: with a double quote, with two backslashes in a row or one at the end, empty."""
    for word in argv[1:]:
        if word == "" or '"' in word or "\\\\" in word or word.endswith("\\"):
            raise ToolError(f"refused: {word!r} cannot be passed on to a Windows program as one "
                            "word (a double quote, two backslashes in a row or one at the end, "
                            "or an empty word); write paths with /")
    return " ".join(f'"{word}"' for word in argv)


def windows_program(name: str, platform: Platform) -> str:
    """The full path of the POSIX tool `name`, whose options the parser's rules know, looked up
    in read_only_folders(), never in Windows' own folder: its sort.exe writes a file with /O,
    its find.exe searches text. Not shutil.which: on Windows it looks in the current folder
    first, the work folder, where a repository could put a sort.exe of its own."""
    windows_folder = Path(os.path.normcase(os.environ.get("SYSTEMROOT", r"C:\Windows")))
    windows_own = None
    for folder in read_only_folders(platform):
        program = program_in(folder, name)
        if program is None:
            continue
        where = Path(os.path.normcase(folder))
        if where != windows_folder and windows_folder not in where.parents:
            return program
        windows_own = windows_own or program
    if windows_own:
        raise ToolError(f"refused: {name} here is Windows' own {windows_own}, whose /options the "
                        "read-only rules do not check (sort /O writes a file); install Git for "
                        "Windows: its POSIX tools (Git\\usr\\bin) are looked up first")
    raise ToolError(f"{name} was not found on this computer's PATH")


def program_in(folder: str, name: str) -> str | None:
    """`name` in `folder` if it is a program there: on Windows with an extension of PATHEXT, and
    then a program Windows starts itself: a .bat or .cmd file runs in cmd.exe, which reads its
    words again (& and > included), and a script needs another program."""
    extensions = [ext for ext in os.environ.get("PATHEXT", "").split(os.pathsep) if ext]
    for candidate in [name + ext for ext in extensions] or [name]:
        path = os.path.join(folder, candidate)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            continue
        if extensions and os.path.splitext(path)[1].lower() not in WINDOWS_PROGRAMS:
            raise ToolError(f"refused: {name} here is {path}, which Windows does not start as a "
                            "program (a .bat or .cmd file runs in cmd.exe, which reads its words "
                            "again); install the POSIX tool (Git for Windows has it)")
        return path
    return None


def private_prefix() -> str:
    """The name of this process's private temp folders: leave() finds them if a subagent's thread
    did not get to remove its own before the agent exited."""
    return f"read-only-{os.getpid()}-"


def remove_private_folders() -> None:
    for folder in glob.glob(os.path.join(tempfile.gettempdir(), private_prefix() + "*")):
        shutil.rmtree(folder, ignore_errors=True)


def read_only_path() -> str:
    """The user's PATH, Homebrew's and their own tools included, without a folder inside the work
    directory or a relative one: there, a repository could put a `cat` of its own."""
    work = Path.cwd().resolve()
    kept = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not Path(folder).is_absolute():
            continue
        real = Path(folder).resolve()
        if real != work and work not in real.parents:
            kept.append(folder)
    return os.pathsep.join(kept)


def read_only_folders(platform: Platform) -> list[str]:
    """Where a read-only command's programs are found: read_only_path(), and on Windows with Git
    for Windows' bash (Git/bin/bash.exe) first Git's own folders, where its POSIX sort, find and
    cat are (usr/bin) and its git (mingw64/bin). The Windows PATH seldom has them, or only
    after Windows' folder."""
    folders = [folder for folder in read_only_path().split(os.pathsep) if folder]
    if platform.name == "windows" and platform.shell.name == "bash":
        git = Path(platform.shell.program).parent.parent
        folders = [str(git / "usr" / "bin"), str(git / "mingw64" / "bin"), *folders]
    return folders


def launcher_environment(private: str, platform: Platform) -> dict:
    """What a read-only command starts with, or bwrap itself: with --unshare-pid, bwrap is PID 1
    in the sandbox and /proc/1/environ shows its environment, so it gets no secret either."""
    path = os.pathsep.join(read_only_folders(platform))
    env = {**READ_ONLY_ENV, **locale_of(platform), "PATH": path, "HOME": private, "TMPDIR": private,
           "TEMP": private, "TMP": private}
    for name in WINDOWS_ENV:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def locale_of(platform: Platform) -> dict:
    """A UTF-8 locale this OS has: C.UTF-8 on Linux, en_US.UTF-8 on macOS (C.UTF-8 came with
    macOS 15)."""
    return {"LANG": platform.utf8_locale, "LC_ALL": platform.utf8_locale}


def read_only_sandbox(platform: Platform) -> str:
    """The OS sandbox that runs read-only commands here: "bubblewrap", "sandbox-exec", or ""."""
    if platform.read_only_sandbox == "bubblewrap" and bwrap_starts(sandbox_program("bwrap")):
        return "bubblewrap"
    if platform.read_only_sandbox == "sandbox-exec" and seatbelt_starts(
            sandbox_program("sandbox-exec")):
        return "sandbox-exec"
    return ""


def sandbox_program(name: str) -> str | None:
    """The sandbox's program, looked up as the commands' programs are: never in the work folder,
    where a repository could put a `bwrap` that runs the command as it is."""
    return shutil.which(name, path=read_only_path())


@functools.cache
def bwrap_starts(bwrap: str | None) -> bool:
    """Whether bubblewrap starts (user namespaces may be off). Tried once per bwrap program: a
    test or a user with another PATH gets its own answer."""
    if bwrap is None:
        return False
    return starts([*sandbox_argv(Path.cwd().resolve()), "--", "true"])


@functools.cache
def seatbelt_starts(sandbox_exec: str | None) -> bool:
    """Whether sandbox-exec starts (Apple marks it deprecated; one day it may not)."""
    if sandbox_exec is None:
        return False
    with tempfile.TemporaryDirectory() as private:
        return starts([*seatbelt_argv(sandbox_exec, private), "/usr/bin/true"])


def starts(argv: list[str]) -> bool:
    env = {"PATH": read_only_path()}
    try:
        probe = subprocess.run(argv, capture_output=True, timeout=SANDBOX_START_WAIT, check=False,
                               env=env)
    except subprocess.TimeoutExpired:  # a sandbox that hangs runs nothing: parsing only
        return False
    return probe.returncode == 0


def note_read_only_protection(screen: Screen, platform: Platform | None = None) -> None:
    """At start-up, once: what keeps read_only_bash read-only here."""
    if platform is None:
        platform = this_platform()
    protection = PROTECTIONS[read_only_sandbox(platform)]
    protection = protection.format(why=WHY_PARSING_ONLY[platform.read_only_sandbox])
    screen.note(f"read_only_bash: read-only is enforced by {protection}")
