"""plumbing/read_only.py: commands the parser must let through, and its refusal of /proc word for
word (the mutation run of 2026-11-28 found these edges read by no test). The commands are v3's."""

import pytest

from plumbing.checks import ToolError
from plumbing.read_only import parse_read_only, refuse_process_files

COMMANDS = {"cat": [], "grep": [], "uniq": [],
            "sort": ["-o", "--output", "--compress-program", "-T", "--temporary-directory"]}


@pytest.mark.parametrize("command", [
    "uniq a.txt",  # one file name: nothing to write into
    "uniq -c a.txt",  # an option is no file name
    "uniq -c -- a.txt",  # after --, one file name
    "sort -- a.txt",  # -- alone abbreviates no option
])
def test_a_reading_command_is_let_through(command):
    assert parse_read_only(command, COMMANDS) == [command.split()]


def test_a_long_option_abbreviated_to_three_characters_is_refused():
    """GNU's long options take any unambiguous start: --o is sort's --output."""
    with pytest.raises(ToolError, match="refused: sort --output writes files"):
        parse_read_only("sort --o=out.txt a.txt", COMMANDS)


def test_proc_is_refused_in_one_line_that_says_why():
    with pytest.raises(ToolError) as refused:
        refuse_process_files([["cat", "/proc/1/environ"]])
    assert str(refused.value) == (
        "refused: '/proc/1/environ' reaches /proc, where other processes' environments (and "
        "secrets) can be read; there is no sandbox here to keep them out of sight")


@pytest.mark.parametrize("word", ["--file=patterns=/proc", "--exclude=build/proc"])
def test_a_long_options_value_is_read_from_its_first_equals_sign_only(word):
    """A relative path after the first '=', in the work folder: not /proc."""
    refuse_process_files([["grep", word, "TODO"]])


def test_a_word_of_every_operator_at_once_is_refused_like_one():
    with pytest.raises(ToolError) as refused:
        parse_read_only("grep '()<>;&|' a.txt", COMMANDS)
    assert str(refused.value) == (
        "refused: ( ) runs commands in a subshell (a quoted '()<>;&|' counts too)")


def test_no_character_starts_a_comment():
    """A shell would drop '#include' as a comment; the words reach grep as written."""
    assert parse_read_only("grep XML #include a.txt", COMMANDS) == [
        ["grep", "XML", "#include", "a.txt"]]


@pytest.mark.parametrize(("command", "said"), [
    ("cat a.txt\ncat b.txt", "refused: a line break starts a second command; read_only_bash runs "
                             "one command, or a pipeline joined by |"),
    ("rm a.txt", "refused: 'rm' is not one of the read-only commands this tool runs: cat, grep, "
                 "uniq, sort. To get a file changed, say so in your report."),
    ("uniq a.txt b.txt", "refused: uniq writes into its second file name; give it one file, or "
                         "pipe into it"),
])
def test_each_refusal_is_one_line_that_says_what_to_do_instead(command, said):
    with pytest.raises(ToolError) as refused:
        parse_read_only(command, COMMANDS)
    assert str(refused.value) == said
