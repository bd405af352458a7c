"""The four base tools, seen from the model's side: what comes back in the tool_result.

Each test lets the scripted model make one call and reads the result out of the next request,
exactly as the model would receive it. Every version has these tools, so every test runs
against every version script.
"""

import json
import os
import time
import tracemalloc

import psutil
import pytest

from plumbing.budget import clip
from plumbing.commands import OUTPUT_LIMIT
from plumbing.platforms import shell_in_use
from tests.agents import call_tool, fifo_at, once, symlink_or_skip

# -- bash --
def test_the_model_is_told_which_os_and_shell_run_its_commands(scripted_api, agent):
    call_tool(scripted_api, agent, "bash", {"command": "echo hi"})
    request = scripted_api.requests[0].body
    (bash,) = [tool for tool in request["tools"] if tool["name"] == "bash"]
    where = shell_in_use()  # "bash on Linux" here
    assert bash["description"].startswith(f"Run a command with {where} in the work directory.")
    assert f"The bash tool runs your commands with {where}." in json.dumps(request["system"])


def test_bash_returns_stdout_stderr_and_exit_code(scripted_api, agent):
    result = call_tool(scripted_api, agent, "bash", {"command": "echo out; echo err >&2; exit 3"})
    assert not result["is_error"]
    assert "out" in result["content"] and "err" in result["content"]
    assert result["content"].endswith("[exit code 3]")


@once("v1")
def test_bash_decodes_invalid_utf8_with_replacement(scripted_api, agent):
    result = call_tool(scripted_api, agent, "bash", {"command": r"printf 'ok \377\376 end'"})
    assert "ok \ufffd\ufffd end" in result["content"]


@once("v1")
@pytest.mark.skipif(os.name != "posix", reason="Git Bash's $! is its own process id, not Windows'")
def test_bash_timeout_stops_the_command_and_all_it_started_and_keeps_partial_output(
    scripted_api, make_agent, tmp_path
):
    agent = make_agent(BASH_TIMEOUT=1)
    command = "sleep 30 & echo $! > child.pid; echo started; sleep 30; echo never"
    result = call_tool(scripted_api, agent, "bash", {"command": command})
    assert result["is_error"]
    assert "timed out after 1 s" in result["content"]
    assert "started" in result["content"] and "never" not in result["content"]
    child = int((tmp_path / "child.pid").read_text())
    assert not runs_after_a_moment(child)  # killing only the shell would leave it running


def runs_after_a_moment(pid: int) -> bool:
    """Whether the process still runs once a SIGKILL sent to it has had time to land (5 s)."""
    deadline = time.monotonic() + 5
    while is_running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return is_running(pid)


def is_running(pid: int) -> bool:
    """Whether a process runs (a zombie, killed and waiting for its parent to reap it, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@once("v1")
def test_bash_does_not_wait_for_a_job_left_in_the_background(scripted_api, agent):
    result = call_tool(
        scripted_api, agent, "bash", {"command": "sleep 30 & echo started in the background"}
    )
    assert not result["is_error"]
    assert result["content"] == "started in the background\n[exit code 0]"


@once("v1")
def test_bash_stops_a_runaway_command_and_the_result_stays_in_budget(scripted_api, agent):
    result = call_tool(scripted_api, agent, "bash", {"command": "yes 'all work and no play'"})
    assert result["is_error"]
    assert f"stopped after writing more than {OUTPUT_LIMIT:,} bytes" in result["content"]
    assert len(result["content"]) <= agent.TOOL_RESULT_BUDGET and "cut here" in result["content"]


@once("v1")
# Each blocked command is only echoed: were the blocklist broken, the test fails deleting nothing.
@pytest.mark.parametrize(
    "command",
    [
        "sudo rm -rf /tmp/x",
        "rm -fr /",
        "rm -rf  /",
        "rm -r -f ~",
        "rm\t-rf /",
        "/bin/rm -rf /",
        "rm --recursive --force /",
        "sudo\tls",
        "/usr/bin/sudo ls",
    ],
)
def test_bash_blocklist_refuses_destructive_commands_however_spelled(scripted_api, agent, command):
    result = call_tool(scripted_api, agent, "bash", {"command": f"echo {command}"})
    assert result["is_error"] and "blocklist" in result["content"]


@once("v1")
@pytest.mark.parametrize(
    "command", ["echo rm -rf build", "echo rm -f notes.txt", "echo rm -r ok", "ls /bin/rmdir"]
)
def test_bash_blocklist_lets_ordinary_commands_through(scripted_api, agent, command):
    assert not call_tool(scripted_api, agent, "bash", {"command": command})["is_error"]


# -- read_file --
def test_read_file_numbers_lines(scripted_api, agent, tmp_path):
    (tmp_path / "a.txt").write_text("first\nsecond\n")
    result = call_tool(scripted_api, agent, "read_file", {"path": "a.txt"})
    assert result["content"] == "     1\tfirst\n     2\tsecond"


def test_read_file_offset_and_limit_say_how_to_continue(scripted_api, agent, tmp_path):
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = call_tool(scripted_api, agent, "read_file", {"path": "a.txt", "offset": 3, "limit": 2})
    assert result["content"].splitlines() == [
        "     3\tline 3",
        "     4\tline 4",
        "[lines 3-4 of 10; call read_file with offset=5 for more]",
    ]


@once("v1")
def test_read_file_cuts_long_lines(scripted_api, agent, tmp_path):
    (tmp_path / "wide.txt").write_text("x" * 5000 + "\n")
    result = call_tool(scripted_api, agent, "read_file", {"path": "wide.txt"})
    assert result["content"] == "     1\t" + "x" * agent.LINE_LIMIT + " [line cut]"


@once("v1")
def test_read_file_refuses_binary_files(scripted_api, agent, tmp_path):
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    result = call_tool(scripted_api, agent, "read_file", {"path": "logo.png"})
    assert result["is_error"] and "binary" in result["content"]


@once("v1")
def test_read_file_of_a_folder_is_an_error_not_a_crash(scripted_api, agent, tmp_path):
    (tmp_path / "folder").mkdir()
    result = call_tool(scripted_api, agent, "read_file", {"path": "folder"})
    assert result["is_error"] and "IsADirectoryError" in result["content"]


# -- write_file and edit_file --
def test_write_file_creates_parent_folders(scripted_api, agent, tmp_path):
    result = call_tool(
        scripted_api, agent, "write_file", {"path": "deep/er/new.txt", "content": "héllo\n"}
    )
    assert not result["is_error"]
    assert (tmp_path / "deep/er/new.txt").read_text(encoding="utf-8") == "héllo\n"


def test_edit_file_replaces_the_one_match(scripted_api, agent, tmp_path):
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    result = call_tool(
        scripted_api, agent, "edit_file", {"path": "a.py", "old_text": "y = 2", "new_text": "y = 3"}
    )
    assert not result["is_error"]
    assert (tmp_path / "a.py").read_text() == "x = 1\ny = 3\n"


@pytest.mark.parametrize(
    ("text", "expected", "hint"),
    [
        ("a = 1\n", "matches 0 places", "read the file and copy the text exactly"),
        ("x\nx\nx\n", "matches 3 places", "add nearby lines so it matches one"),
    ],
)
def test_edit_file_needs_exactly_one_match(scripted_api, agent, tmp_path, text, expected, hint):
    (tmp_path / "a.py").write_text(text)
    result = call_tool(
        scripted_api, agent, "edit_file", {"path": "a.py", "old_text": "x", "new_text": "y"}
    )
    assert result["is_error"] and expected in result["content"] and hint in result["content"]
    assert (tmp_path / "a.py").read_text() == text


@once("v1")
def test_edit_file_counts_overlapping_matches(scripted_api, agent, tmp_path):
    (tmp_path / "a.js").write_text("}\n}\n}\n")  # "}\n}\n" is there twice, sharing the middle line
    result = call_tool(
        scripted_api, agent, "edit_file", {"path": "a.js", "old_text": "}\n}\n", "new_text": "]\n"}
    )
    assert result["is_error"] and "matches 2 places" in result["content"]
    assert (tmp_path / "a.js").read_text() == "}\n}\n}\n"


@once("v1")
@pytest.mark.parametrize(
    ("before", "old_text", "new_text", "after"),
    [
        (
            b"alpha\r\nbeta\r\ngamma\r\n",
            "beta\ngamma",
            "BETA\nGAMMA",
            b"alpha\r\nBETA\r\nGAMMA\r\n",
        ),  # as read_file shows it
        (
            b"alpha\r\nbeta\r\ngamma\r\n",
            "beta\r\ngamma",
            "B\r\nG",
            b"alpha\r\nB\r\nG\r\n",
        ),  # sent with its \r
        (
            b"alpha\r\nbeta\r\ngamma\r\n",
            "beta\ngamma",
            "B\r\nG",
            b"alpha\r\nB\r\nG\r\n",
        ),  # a mix: no \r\r\n
        (
            b"alpha\r\nbeta\ngamma\n",
            "beta\ngamma",
            "B\nG",
            b"alpha\r\nB\nG\n",
        ),  # mixed endings: it matches as sent
    ],
)
def test_edit_file_keeps_windows_line_endings(
    scripted_api, agent, tmp_path, before, old_text, new_text, after
):
    (tmp_path / "win.txt").write_bytes(before)
    edit = {"path": "win.txt", "old_text": old_text, "new_text": new_text}
    assert not call_tool(scripted_api, agent, "edit_file", edit)["is_error"]
    assert (tmp_path / "win.txt").read_bytes() == after


@once("v1")
# -- the work directory is a fence --
@pytest.mark.parametrize(
    "path", ["../outside.txt", "/etc/hostname", "sub/../../outside.txt", "link/secret.txt"]
)
@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("read_file", {}),
        ("write_file", {"content": "x"}),
        ("edit_file", {"old_text": "a", "new_text": "b"}),
    ],
)
def test_file_tools_refuse_paths_outside_the_work_directory(
    scripted_api, agent, tmp_path, path, tool, extra
):
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("a secret")
    symlink_or_skip(tmp_path / "link", outside, target_is_directory=True)
    result = call_tool(scripted_api, agent, tool, {"path": path, **extra})
    assert result["is_error"] and "outside the work directory" in result["content"]
    assert (outside / "secret.txt").read_text() == "a secret"
    assert not (tmp_path.parent / "outside.txt").exists()


# -- malformed calls from the model --
@pytest.mark.parametrize(
    ("name", "tool_input", "expected"),
    [
        (
            "delete_everything",
            {},
            "unknown tool 'delete_everything'; the tools you have are: bash, read_file",
        ),
        ("read_file", {"path": 5}, "invalid input for read_file (path): 5 is not of type 'string'"),
        ("write_file", {"path": "a.txt"}, "'content' is a required property"),
        (
            "bash",
            {"command": "ls", "cwd": "/"},
            "Additional properties are not allowed ('cwd' was unexpected)",
        ),
        ("read_file", {"path": "a.txt", "offset": 0}, "0 is less than the minimum of 1"),
    ],
)
def test_malformed_tool_calls_come_back_as_errors_the_model_can_act_on(
    scripted_api, agent, name, tool_input, expected
):
    result = call_tool(scripted_api, agent, name, tool_input, invalid=True)
    assert result["is_error"]
    assert expected in result["content"]


@once("v1")
def test_a_huge_wrong_value_is_not_echoed_back(scripted_api, agent):
    result = call_tool(
        scripted_api, agent, "bash", {"command": ["echo " + "x" * 20_000]}, invalid=True
    )
    assert result["is_error"] and len(result["content"]) < 300
    assert result["content"] == (
        "error: invalid input for bash (command): breaks the rule type: 'string'"
    )


@once("v1")
def test_the_terminal_gets_no_escape_codes_from_a_result(scripted_api, agent, capsys):
    call_tool(scripted_api, agent, "bash", {"command": r"printf '\033]0;title\007\033[2Jcleared'"})
    shown = capsys.readouterr().out
    assert "\033" not in shown and "\007" not in shown and "  ??cleared" in shown


# -- the context budget --
def test_huge_bash_output_is_cut_to_the_budget_with_a_hint(scripted_api, agent):
    result = call_tool(scripted_api, agent, "bash", {"command": "seq 1 100000"})
    content = result["content"]
    assert len(content) <= agent.TOOL_RESULT_BUDGET
    assert content.startswith("1\n2\n3\n") and content.endswith("100000\n[exit code 0]")
    assert "cut here to fit the context budget" in content
    assert "read_file with offset and limit" in content and "grep" in content


@once("v1")
def test_huge_file_read_is_cut_and_numbered_lines_show_where(scripted_api, agent, tmp_path):
    (tmp_path / "big.log").write_text(
        "".join(f"event {n} " + "." * 60 + "\n" for n in range(1, 2001))
    )
    result = call_tool(scripted_api, agent, "read_file", {"path": "big.log"})
    content = result["content"]
    assert len(content) <= agent.TOOL_RESULT_BUDGET
    omitted = content.split("[... ")[1].split(" of ")[0].replace(",", "")
    assert int(omitted) > 100_000 - agent.TOOL_RESULT_BUDGET
    assert "     1\tevent 1 " in content and "  2000\tevent 2000 " in content


@once("v1")
def test_clip_keeps_a_result_of_exactly_the_budget_and_cuts_one_character_more(agent):
    exact = "x" * agent.TOOL_RESULT_BUDGET
    assert clip(exact, agent.TOOL_RESULT_BUDGET) == exact
    cut = clip(exact + "y", agent.TOOL_RESULT_BUDGET)
    assert len(cut) <= agent.TOOL_RESULT_BUDGET and "cut here to fit the context budget" in cut
    assert cut.endswith("y")  # the tail is kept


# -- hostile files: the file tools open regular files only, and never through a second name --
@pytest.fixture
def fifo(tmp_path):
    with fifo_at(tmp_path / "pipe") as path:
        yield path


@once("v1")
@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("read_file", {}),
        ("write_file", {"content": "x"}),
        ("edit_file", {"old_text": "a", "new_text": "b"}),
    ],
)
def test_file_tools_refuse_a_fifo_at_once(scripted_api, agent, fifo, tool, extra):
    started = time.monotonic()
    result = call_tool(scripted_api, agent, tool, {"path": fifo.name, **extra})
    assert result["is_error"] and "not a regular file" in result["content"]
    assert time.monotonic() - started < 4


@once("v1")
def test_read_file_of_a_sparse_8_gib_file_reads_a_few_bytes(scripted_api, agent, tmp_path):
    with open(tmp_path / "sparse.img", "wb") as file:
        file.truncate(8 << 30)
    result = call_tool(scripted_api, agent, "read_file", {"path": "sparse.img"})
    assert result["is_error"] and "looks binary (8,589,934,592 bytes)" in result["content"]
    # the advice in the shell the bash tool runs: PowerShell has no file or xxd (Wine runs this)
    advice = "Format-Hex -Path FILE" if shell_in_use().startswith("PowerShell") else "xxd | head"
    assert advice in result["content"], result["content"]


@once("v1")
def test_read_file_keeps_only_the_lines_it_shows(scripted_api, agent, tmp_path):
    (tmp_path / "one-long-line.txt").write_bytes(b"a" * 50_000_000 + b"\nsecond line\nthird\n")
    tracemalloc.start()
    try:
        read = {"path": "one-long-line.txt", "offset": 2}
        result = call_tool(scripted_api, agent, "read_file", read)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result["content"] == "     2\tsecond line\n     3\tthird"
    assert peak < 10_000_000  # the 50 MB line was never held whole


@once("v1")
@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("write_file", {"content": "pwned"}),
        ("edit_file", {"old_text": "secret", "new_text": "pwned"}),
    ],
)
def test_file_tools_do_not_write_through_a_hard_link(
    scripted_api, agent, tmp_path_factory, tmp_path, tool, extra
):
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("secret")
    try:
        os.link(outside, tmp_path / "linked.txt")
    except OSError as exc:
        pytest.skip(f"no hard link between the two temp folders here: {exc}")
    result = call_tool(scripted_api, agent, tool, {"path": "linked.txt", **extra})
    assert result["is_error"] and "2 names (hard links)" in result["content"]
    assert outside.read_text() == "secret"


@once("v1")
def test_a_symlink_swapped_in_after_the_check_is_not_followed(agent, tmp_path_factory, tmp_path):
    """workdir_path() checked and resolved the path; then another process put a link in its place.
    The open that follows must not write through it, nor read through it."""
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("secret")
    checked = agent.workdir_path("notes.txt")
    symlink_or_skip(checked, outside)  # the swap, between the check and the open
    with pytest.raises(agent.ToolError, match="is a symbolic link"):
        agent.write_text_file(checked, "pwned")
    with pytest.raises(agent.ToolError, match="is a symbolic link"):
        agent.read_text_file(checked)
    assert outside.read_text() == "secret"
