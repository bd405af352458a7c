"""Mutation testing, one chosen module at a time: how many planted bugs the tests catch.

    python -m tests.mutation rules          # one target (see TARGETS), a few minutes
    python -m tests.mutation --list         # the targets, their code and their tests
    python -m tests.mutation todo --recheck tests/test_mutants_todo.py   # new tests, same run

mutmut (requirements-mutation.txt) changes one thing at a time in the target's code (a `<` for a
`<=`, a string, a deleted call) and runs the tests that reach the function it changed. A mutant the
tests pass is a bug they would miss. The run works in a copy of the project under .mutation/, so
the checkout is never changed, and it reads only the test files named in the target: on a shared
machine each run takes minutes, not the suite's hour per mutant. Not part of .ci/run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from scripted import SCRIPTS
from tests.mutation_watchdog import MUTMUT_TIMEOUT
from workshop.reference import EXERCISES, variants

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"

# Tests that run a command make the process that runs them a subreaper (plumbing/commands.py's
# guard_the_agent): mutmut's own process, which runs every test once to see what reaches what,
# would then adopt a command's orphans, and its wait for a mutant's worker meets a pid it never
# started and stops with a KeyError. Targets other than the commands' own leave these out.
BASH_RUNS = ("bash", "command", "terminal", "escape_codes", "malformed", "huge_wrong_value")
# Tests that build the site (the built_site fixture): a whole build per mutant, in processes
# mutmut's copy cannot start its code in.
SITE_BUILDS = ("the_bench_plays",)


def tests_in(file: str, leaving_out: tuple[str, ...] = ()) -> list[str]:
    """The tests of `file` whose names contain none of `leaving_out`."""
    names = re.findall(r"^def (test_\w+)", (ROOT / file).read_text(encoding="utf-8"), re.M)
    return [f"{file}::{name}" for name in names if not any(word in name for word in leaving_out)]


# the lesson scripts, v1 first; a target's functions are looked for in each (from its list's
# slice on: v3 onwards for subagents ...)
LESSONS = [name for name in SCRIPTS.values() if (ROOT / name).exists()]

# A target: the files to mutate; optionally the functions (mutmut's names, globs allowed) when
# only part of a file is in scope; and the tests that matter for it.
TARGETS = {
    "rules": {
        "files": ["scripted/rules.py"],
        # plain_text() and declared_tools() also serve the scenario's checks (test_server.py's)
        "tests": [
            "tests/test_rules.py",
            "tests/test_server.py::test_scripted_tool_call_must_fit_the_declared_schema",
            "tests/test_server.py::test_failed_expect_is_a_problem_and_a_400",
            "tests/test_server.py::test_tracks_route_requests_by_their_first_user_message",
        ],
    },
    "server-rules": {
        "files": ["scripted/server.py"],
        "functions": [
            "x_signature_errors",
            "x_breakpoints",
            "x_count_usage",
            "xǁScriptedAPIǁ_answer",
            "xǁScriptedAPIǁ_endpoint_refuses",
            "xǁScriptedAPIǁ_missing_thinking_errors",
            "xǁScriptedAPIǁ_prefill_errors",
            "xǁScriptedAPIǁ_too_long",
        ],
        # test_server.py's tests of the same rules; its tests of timing (latency, held replies)
        # go through _answer too, and would add seconds to every mutant for nothing
        "tests": ["tests/test_rules.py"] + [
            f"tests/test_server.py::test_{name}"
            for name in (
                "a_follow_up_request_reads_the_whole_earlier_conversation_from_the_cache",
                "below_the_model_minimum_nothing_is_cached_and_nothing_says_so",
                "the_minimum_cacheable_prefix_depends_on_the_model",
                "a_breakpoint_on_the_system_prompt_caches_only_what_comes_before_it",
                "more_than_four_breakpoints_are_refused",
                "thinking_blocks_sent_back_as_they_came_are_accepted",
                "a_thinking_block_changed_unsigned_or_left_out_is_refused",
                "thinking_blocks_are_tied_to_the_model_that_wrote_them",
                "sonnet_5_5_refuses",
                "sonnet_5_5_takes_no_prefill_but_resumes_a_paused_turn",
                "an_endpoint_can_refuse_an_optional_field",
                "a_prompt_longer_than_the_context_window_is_too_long",
                "other_endpoints_answer_not_found",
                "a_broken_conversation_is_refused_like_the_real_api",
            )
        ] + [  # the rows of scripted/endpoints.py: their own refusals and key headers
            f"tests/test_endpoints.py::test_{name}"
            for name in (
                "a_refused_field_gets_the_rows_own_words_and_error_shape",
                "errors_come_in_the_rows_shape",
                "max_tokens_beyond_the_rows_limit_is_refused",
                "the_key_is_taken_only_in_the_rows_headers",
                # no key to a row whose key check is unknown; both headers to a Bearer-only one
                "a_request_without_a_key_passes_only_where_the_row_says_no_key_is_checked",
                "a_bearer_only_row_takes_both_headers_and_refuses_x_api_key_alone_naming_bearer",
            )
        ],
    },
    "endpoint-rules": {
        "files": ["scripted/server.py"],
        # how the server plays a row of scripted/endpoints.py: the model and limits it serves,
        # the key headers, the fields its model never sees, the thinking blocks it returns, and
        # the max_tokens it refuses (_endpoint_refuses is in server-rules)
        "functions": [
            "x_endpoint_model", "x_uses_model_table", "x_auth_sent", "x_as_seen_by",
            "x_without_is_error", "x_field_in", "x_thinking_as_returned",
            "xǁScriptedAPIǁ_beyond_endpoint_limit", "xǁScriptedAPIǁ_too_long_message",
        ],
        "tests": [  # the first half of test_endpoints.py: each row at the server, through the SDK
            f"tests/test_endpoints.py::test_{name}"
            for name in (
                "a_refused_field_gets_the_rows_own_words_and_error_shape",
                "errors_come_in_the_rows_shape",
                "thinking_blocks_and_tool_ids_come_as_the_row_returns_them",
                "a_request_without_thinking_gets_it_only_where_the_model_thinks_by_default",
                "vllm_thinks_as_its_server_was_started_and_checks_no_signature",
                "usage_carries_the_rows_fields_where_the_row_puts_them",
                "max_tokens_beyond_the_rows_limit_is_refused",
                "a_row_that_names_no_context_window_takes_what_claudes_largest_takes",
                "a_dropped_is_error_never_reaches_the_model",
                "the_key_is_taken_only_in_the_rows_headers",
                "a_request_without_a_key_passes_only_where_the_row_says_no_key_is_checked",
                "a_bearer_only_row_takes_both_headers_and_refuses_x_api_key_alone_naming_bearer",
            )
        ] + [
            "tests/test_server.py::test_an_endpoint_can_refuse_an_optional_field",
            "tests/test_server.py::"
            "test_an_endpoint_can_refuse_a_field_inside_another_and_take_the_outer_one",
            "tests/test_server.py::test_a_prompt_longer_than_the_context_window_is_too_long",
            "tests/test_rules.py::test_an_unknown_model_is_not_found",  # Claude's rows' model table
            "tests/test_loop.py::test_max_tokens_beyond_the_endpoints_limit_is_one_line_that_"
            "names_max_tokens",
        ],
    },
    "budget": {
        "files": ["plumbing/budget.py"],
        # the cut and the room made; tool_results_size() decides, in setup.py's recovery from
        # a prompt too long, whether the user's message or the old tool results are the bulk
        "functions": [
            "x_clip", "x_cut_note", "x_cut_short", "x_make_room", "x_is_full_tool_result",
            "x_tool_results_size",
        ],
        "tests": ["tests/test_plumbing_rules.py"] + [
            f"tests/test_loop.py::test_{name}"
            for name in (
                "after_prompt_too_long_the_oldest_tool_results_make_room_and_the_next_turn_works",
                "a_message_too_long_for_the_window_is_taken_back_and_the_next_one_works",
                "old_tool_results_that_fill_the_window_on_a_turns_first_request_make_room",
                "the_message_is_taken_back_only_when_it_is_larger_than_all_old_tool_results",
            )
        ],
    },
    "replies": {
        "files": ["plumbing/replies.py"],
        "tests": ["tests/test_plumbing_rules.py"],
    },
    "subagents": {
        "files": ["plumbing/subagents.py"],
        "tests": ["tests/test_plumbing_rules.py"],
    },
    "checks": {
        "files": ["plumbing/checks.py"],
        "tests": ["tests/test_plumbing_rules.py"],
    },
    "turns": {
        "files": ["plumbing/turns.py"],
        "tests": ["tests/test_plumbing_rules.py", "tests/test_plumbing_turns.py"],
    },
    "deny-list": {
        "files": ["plumbing/commands.py"],
        "functions": ["x_refuse_if_blocked", "x_blocklist_spelling"],
        "tests": ["tests/test_plumbing_rules.py"],
    },
    "files": {
        "files": ["plumbing/files.py"],
        # how the file tools open, page and cut; each OS's branch runs here through its Platform
        "tests": ["tests/test_plumbing_files.py"] + tests_in("tests/test_tools.py", BASH_RUNS),
    },
    "numbers": {
        "files": ["docsgen/numbers.py"],
        # the rules the site's figures are made by; what gathers them is numbers-pages
        "functions": [
            "x_constant", "x_number_constants", "x_environment_default", "x_setting_default",
            "x_as_shown", "x_code_lines", "x_plumbing_line", "x_plumbing_import_lines",
            "x_lesson_code_lines", "x_changed_lines", "x_main_agent_input", "x_cache_writes",
            "x_model_numbers", "x_caching_numbers", "x_fill_in*",
        ],
        "tests": ["tests/test_generators.py"],
    },
    "numbers-pages": {
        "files": ["docsgen/numbers.py"],
        # what gathers the figures of a build: page_numbers() calls the rules above on the real
        # scripts and on benchmark and demo figures a test gives it; benchmark_figures() runs
        # the benchmarks (here: a small program in their place)
        "functions": [
            "x_page_numbers", "x_benchmark_figures", "x_compaction_numbers",
            "x_compaction_demo_numbers",
        ],
        "tests": [
            f"tests/test_generators.py::test_{name}"
            for name in (
                "the_benchmark_figures_and_the_demos_are_written_as_the_pages_quote_them",
                "without_compaction_figures_or_a_demo_its_numbers_are_left_out",
                "every_figure_read_from_the_code_is_the_one_in_its_file",
                "the_benchmarks_run_from_the_project_root_and_a_failure_shows_their_error",
            )
        ],
    },
    "changes": {
        "files": ["docsgen/changes.py"],
        "tests": ["tests/test_generators.py"],
    },
    "claims": {
        "files": ["docsgen/claims.py"],
        # the tests that build the site check every page's claims too, but a build per mutant
        # is minutes: the rest check each claim, table and row rule on pages made for them
        "tests": tests_in("tests/test_claims.py",
                          ("figures_of_the_build", "planted_drift", "build_stops_on_a_false"))
        + ["tests/test_mutants_claims.py"],
    },
    "workshop": {
        "files": ["workshop/reference.py"],
        # how a solution is built from its diffs; the exercises' own checks are the targets
        # workshop-01 ... workshop-07 (exercise_target() below); their regular expressions are
        # module constants, which mutmut leaves alone (test_workshop_rules.py pins exercise 06's)
        "functions": [
            "x_apply_diff", "x_apply_file_diff", "x_hunk_length", "x_find_block", "x_diff_path",
            "x_rules_of", "x_rule_of", "x_variants", "x_empty_folder",
        ],
        "tests": [
            "tests/test_workshop_rules.py",
            "tests/test_workshop.py::test_a_diff_applies_after_unrelated_edits_and_a_stale_one_says_where",
            "tests/test_workshop.py::test_a_diff_can_create_files_in_new_folders",
            "tests/test_workshop.py::"
            "test_the_reference_tool_starts_from_an_empty_folder_and_empties_only_its_own",
            "tests/test_workshop.py::test_every_rule_of_a_readme_has_a_test_a_wrong_and_a_right_solution",
        ],
    },
    # -- the rest of plumbing/ --
    "commands": {
        "files": ["plumbing/commands.py"],
        # running a command, its output, its time limit and ending its process tree (the deny
        # list is deny-list's); GUARD below keeps mutmut's own process from adopting orphans
        "functions": [
            "x_run_command", "x_command_environment", "x_decoded", "x_wait_or_stop",
            "x_end_command", "x_end_every_process_started", "x_end_processes", "x_collect",
            "x_zombie_of_another", "x_alive", "x_process_tree", "x_tagged", "x_agent_tag",
            "x_libc", "x_guard_the_agent",
        ],
        "tests": ["tests/test_plumbing_commands.py", "tests/test_mutants_commands.py"],
    },
    "compaction": {
        "files": ["plumbing/compaction.py"],
        # the chapter's benchmark test builds the site, running the demo in a process of its
        # own: minutes per mutant, and the copy's demo cannot start under mutmut
        "tests": tests_in("tests/test_compaction.py", SITE_BUILDS),
    },
    "model": {
        "files": ["plumbing/model.py"],
        # test_bad_replies.py: a reply that is no reply, and the usage as the endpoint sent it
        "tests": ["tests/test_model.py", "tests/test_plumbing_turns.py",
                  "tests/test_bad_replies.py", "tests/test_mutants_model.py"],
    },
    "platforms": {
        "files": ["plumbing/platforms.py"],
        "tests": ["tests/test_plumbing_platforms.py", "tests/test_mutants_platforms.py",
                  "tests/test_plumbing_files.py"],
    },
    "mcp": {
        "files": ["plumbing/mcp.py"],
        # v6's MCP client; the tests that run the agent at a pseudo-terminal, or wait for its
        # servers to end, are left out (seconds each, per mutant)
        "tests": tests_in("tests/test_mcp.py", ("terminal", "outlives"))
        + ["tests/test_mutants_mcp.py"],
    },
    "prompt": {
        "files": ["plumbing/prompt.py"],
        # test_plumbing_prompt.py reads in-process; test_terminal.py's pseudo-terminal runs the
        # same code in a child the mutation tool cannot see into
        "tests": ["tests/test_plumbing_prompt.py", "tests/test_screen.py", "tests/test_terms.py"],
    },
    "read-only": {
        "files": ["plumbing/read_only.py"],
        # the parser's refusals, each through an explore subagent's read_only_bash
        "tests": ["tests/test_mutants_read_only.py", "tests/test_plumbing_sandbox.py"] + [
            f"tests/test_subagents.py::test_read_only_bash_{name}"
            for name in ("refuses_whatever_could_change_a_file", "runs_read_commands")
        ],
    },
    # sandbox.py in two: what the sandbox is built of (argument lists, environment, programs
    # found), asserted as data; and running a pipeline under it, which starts bubblewrap and
    # the agents of test_sandbox.py for each mutant
    "sandbox-argv": {
        "files": ["plumbing/sandbox.py"],
        "functions": [
            "x_without_git_programs", "x_git_driver_settings", "x_sandbox_argv",
            "x_read_only_stages", "x_seatbelt_argv", "x_windows_command_line",
            "x_windows_program", "x_program_in", "x_read_only_path", "x_read_only_folders",
            "x_launcher_environment", "x_locale_of", "x_read_only_sandbox", "x_sandbox_program",
            "x_without_seatbelt_warning",
        ],
        "tests": ["tests/test_mutants_sandbox.py", "tests/test_plumbing_sandbox.py"],
    },
    "sandbox-run": {
        "files": ["plumbing/sandbox.py"],
        "functions": [
            "x_run_read_only", "x_run_stages", "x_git_drivers", "x_private_prefix",
            "x_remove_private_folders", "x_bwrap_starts", "x_seatbelt_starts", "x_starts",
            "x_note_read_only_protection",
        ],
        "tests": ["tests/test_plumbing_sandbox.py", "tests/test_sandbox.py",
                  "tests/test_mutants_sandbox_run.py"],
    },
    "screen": {
        "files": ["plumbing/screen.py"],
        # test_bad_replies.py: the usage line, whatever the endpoint counted or left out
        "tests": ["tests/test_plumbing_screen.py", "tests/test_mutants_screen.py",
                  "tests/test_screen.py"] + [
            f"tests/test_bad_replies.py::test_{name}"
            for name in (
                "a_figure_the_endpoint_did_not_send_is_not_shown_as_zero",
                "an_input_far_below_what_was_sent_is_said_and_the_edge_is_not",
                "an_endpoint_that_refused_caching_has_no_cache_on_the_line",
            )
        ],
    },
    "setup": {
        "files": ["plumbing/setup.py"],
        # test_mutants_setup.py: what only a script's main() reaches (start-up checks, --help's
        # settings line), called directly
        "tests": ["tests/test_plumbing_rules.py", "tests/test_model.py",
                  "tests/test_mutants_setup.py"]
        + tests_in("tests/test_loop.py", BASH_RUNS) + [  # with_retry_notices' lines
            "tests/test_screen.py::test_each_retry_gets_a_line_with_its_reason_attempt_and_wait",
            "tests/test_screen.py::"
            "test_an_error_gives_the_apis_type_and_message_and_how_often_it_was_retried",
            "tests/test_screen.py::test_an_error_that_is_not_retried_does_not_say_it_was",
        ],
    },
    "skills": {
        "files": ["plumbing/skills.py"],
        "tests": ["tests/test_plumbing_skills.py", "tests/test_mutants_skills.py",
                  "tests/test_skills.py"],
    },
    "status": {
        "files": ["plumbing/status.py"],
        "tests": ["tests/test_plumbing_screen.py"]
        + tests_in("tests/test_subagents.py", BASH_RUNS),
    },
    "todo": {
        "files": ["plumbing/todo.py"],
        "tests": ["tests/test_plumbing_todo.py", "tests/test_mutants_todo.py",
                  "tests/test_todo.py"],
    },
    # -- the rest of scripted/ --
    "server": {
        "files": ["scripted/server.py"],
        # what server-rules and endpoint-rules leave: scenarios, turns, streams, the handler
        "functions": [
            "x_load_scenario", "x_check_scenario", "x_step_label", "x_turn_shape_problem",
            "x_is_tool_call", "x_expect_failures", "x_tool_call_problems", "x_canonical",
            "x_to_json", "x_tokens", "x_sign", "x_prompt_units", "x_without_cache_control",
            "x_sse_events", "x_broken_stream_events", "x_chunks", "x_error_body",
            "x_openai_error_body", "xǁScriptedAPIǁ_play_turn", "xǁScriptedAPIǁ_track_for",
            "xǁScriptedAPIǁ_message", "xǁScriptedAPIǁ_thinking_and_text",
            "xǁScriptedAPIǁplay", "xǁScriptedAPIǁanswer", "xǁScriptedAPIǁremaining",
            "xǁHandlerǁdo_POST", "xǁHandlerǁ_send", "x_thinking_block", "x_content_key",
            "x_error_reply",
        ],
        "tests": ["tests/test_server.py", "tests/test_rules.py", "tests/test_endpoints.py",
                  "tests/test_mutants_server.py"],
    },
    "endpoints": {
        "files": ["scripted/endpoints.py"],
        # the rows are data (mutmut leaves them alone: test_endpoints.py pins each row's
        # behaviour); unknown_endpoint() names the rows when a name is wrong
        "tests": ["tests/test_endpoints.py", "tests/test_other_models.py"],
    },
    "record": {
        "files": ["scripted/record.py"],
        "tests": tests_in("tests/test_recordings.py", BASH_RUNS)
        + ["tests/test_mutants_record.py"],
    },
    "replay": {
        "files": ["scripted/replay.py"],
        "tests": tests_in("tests/test_recordings.py", BASH_RUNS)
        + ["tests/test_mutants_replay.py"],
    },
    "chat-completions": {
        "files": ["scripted/chat_completions.py"],
        # test_litellm.py needs LiteLLM's proxy, a child process from a virtual environment the
        # copy has not got (it skips there); test_mutants_chat_completions.py asks the backend
        # over HTTP in the test's own process
        "tests": ["tests/test_litellm.py", "tests/test_mutants_chat_completions.py"],
    },
    # -- the rest of docsgen/ --
    "docs-endpoints": {
        "files": ["docsgen/endpoints.py"],
        "tests": ["tests/test_other_models.py", "tests/test_mutants_docs_endpoints.py"],
    },
    # charts and hood: test_hood.py reads the built site, which the copy leaves out; their
    # tests/test_mutants_*.py draw the charts and make the pages in the test's own process
    "charts": {
        "files": ["docsgen/charts.py"],
        "tests": ["tests/test_mutants_charts.py", "tests/test_generators.py",
                  "tests/test_hood.py"],
    },
    "hood": {
        "files": ["docsgen/hood.py"],
        "tests": ["tests/test_mutants_hood.py", "tests/test_hood.py", "tests/test_generators.py"],
    },
    "generated": {
        "files": ["docsgen/generated.py"],
        # test_docs.py's build tests are left out of the copy: test_mutants_generated.py calls
        # each step in the test's own process (expected_files() runs every demo: not here)
        "tests": ["tests/test_mutants_generated.py", "tests/test_docs.py",
                  "tests/test_chapters.py"],
    },
    "search": {
        "files": ["docsgen/search.py"],
        "tests": ["tests/test_mutants_search.py", "tests/test_docs.py"],
    },
    "site-tools": {
        # the build's entry points: serving, the vendored mermaid, screenshots, mkdocs hooks
        "files": ["docsgen/serve.py", "docsgen/vendor.py", "docsgen/hooks.py",
                  "docsgen/screenshots.py", "docsgen/__main__.py"],
        # test_layout.py and test_browser.py open the built site, which the copy leaves out
        "tests": ["tests/test_mutants_site_tools.py", "tests/test_layout.py",
                  "tests/test_browser.py", "tests/test_docs.py"],
    },
    # -- the lessons' own mechanisms, in every version that has them --
    "lessons-loop": {
        "files": LESSONS,
        "functions": ["x_agent_loop", "x_call_model", "x_answer_tool_calls", "x_run_tool",
                      "x_run_turn"],
        "tests": ["tests/test_loop.py", "tests/test_turn_limits.py",
                  "tests/test_mutants_lessons_loop.py"],
    },
    "lessons-tools": {
        "files": LESSONS,
        "functions": ["x_run_bash", "x_read_file", "x_write_file", "x_edit_file"],
        "tests": ["tests/test_tools.py", "tests/test_mutants_lessons_tools.py"],
    },
    "lessons-todo": {
        "files": LESSONS[1:],
        "functions": ["x_update_todos", "x_remind_to_plan", "x_remind_of_open_todos"],
        "tests": ["tests/test_todo.py"],
    },
    "lessons-subagents": {
        "files": LESSONS[2:],
        "functions": ["x_run_subagent", "x_run_read_only_bash", "x_run_tasks"],
        "tests": ["tests/test_subagents.py", "tests/test_turn_limits.py",
                  "tests/test_mutants_lessons_subagents.py"],
    },
    "lessons-skills": {
        "files": LESSONS[3:],
        "functions": ["x_skill_sources", "x_load_skills", "x_read_skill", "x_catalogue",
                      "x_skill_tool", "x_install_skills", "x_activate_skill",
                      "x_path_for_reading"],
        "tests": ["tests/test_skills.py", "tests/test_mutants_lessons_skills.py"],
    },
    "v5-compaction": {
        "files": ["v5_compaction.py"],
        "functions": ["x_compact", "x_what_must_survive", "x_compact_by_hand"],
        "tests": tests_in("tests/test_compaction.py", SITE_BUILDS)
        + ["tests/test_mutants_v5_compaction.py"],
    },
}

# The server's whole run takes about three hours on two cores: three parts, one sitting each.
_SERVER_PARTS = {
    "scenarios": ["x_load_scenario", "x_check_scenario", "x_step_label", "x_turn_shape_problem",
                  "x_is_tool_call", "x_expect_failures", "x_tool_call_problems", "x_canonical"],
    "replies": ["x_to_json", "x_tokens", "x_sign", "x_prompt_units", "x_without_cache_control",
                "x_sse_events", "x_broken_stream_events", "x_chunks", "x_error_body",
                "x_openai_error_body", "x_thinking_block", "x_content_key", "x_error_reply"],
}
_SERVER_PARTS["handler"] = [name for name in TARGETS["server"]["functions"]
                            if not any(name in part for part in _SERVER_PARTS.values())]
for _part, _functions in _SERVER_PARTS.items():
    TARGETS[f"server-{_part}"] = {**TARGETS["server"], "functions": _functions}

# The loop is in every lesson, nearly the same in each (a step changes at most ten lines of it):
# about 180 mutants a lesson, each checked against that lesson's ~60 loop tests. One target a
# lesson, so that one sitting measures one (the newest first), and the whole is their sum.
# From v2 on the loop also calls what each step added (the todo reminders, the skills' catalogue,
# compaction, the MCP tools): their tests are the loop's too.
_LOOP_CALLS = {"v2": "lessons-todo", "v4": "lessons-skills", "v5": "v5-compaction", "v6": "mcp"}
for _lesson in LESSONS:
    _version = _lesson.split("_")[0]
    _added = [test for step, target in _LOOP_CALLS.items() if step <= _version
              for test in TARGETS[target]["tests"]]
    TARGETS[f"lessons-loop-{_version}"] = {
        **TARGETS["lessons-loop"], "files": [_lesson],
        "tests": TARGETS["lessons-loop"]["tests"] + _added}

# The subagents (~111 mutants a lesson) and the skills (~140) are split the same way, one target
# a lesson.
for _mechanism in ("lessons-subagents", "lessons-skills"):
    for _lesson in TARGETS[_mechanism]["files"]:
        TARGETS[f"{_mechanism}-{_lesson.split('_')[0]}"] = {
            **TARGETS[_mechanism], "files": [_lesson]}


def exercise_target(exercise: str) -> dict:
    """An exercise's own checks: its test_exercise.py, measured by running it as
    tests/test_workshop.py does, on the script an attendee starts from (every rule must fail) and
    on each wrong and right solution of the exercise. The file is mutated where it is; its
    folder (01-search-tool) is no package name, but pytest imports it by path
    (--import-mode=importlib) under the name mutmut gives it."""
    number = exercise[:2]
    runs = [f"test_the_untouched_starting_point_fails_and_each_failure_names_its_rule[{exercise}]"]
    runs += [
        f"test_each_wrong_solution_fails_the_test_of_the_rule_it_breaks[{number}-{wrong}]"
        for wrong in variants(exercise, "wrong")
    ]
    runs += [
        f"test_each_other_right_solution_passes[{number}-{right}]"
        for right in variants(exercise, "right")
    ]
    return {
        "files": [f"workshop/{exercise}/test_exercise.py"],
        "tests": [f"tests/test_workshop.py::{run}" for run in runs],
    }


TARGETS.update({f"workshop-{exercise[:2]}": exercise_target(exercise) for exercise in EXERCISES})


def copy_project(into: Path) -> None:
    """The files git knows of, or would (new ones included), as they are in the checkout."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not name.startswith(".mutation/"):
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)


# Appended to the copy's tests/conftest.py (never the checkout's). mutmut runs every test once in
# its own process to see what reaches what, then each mutant in a forked worker, and waits for
# its workers with os.wait(). A test that runs a command makes its process a subreaper
# (plumbing/commands.py's guard_the_agent), so mutmut's process would adopt the commands' orphans
# and its wait meet a pid it never started (mutmut stops with a KeyError). After each test: no
# longer a subreaper, and whatever was adopted and has ended is collected.
GUARD = """

import os as _os

# The site's tests need a whole docs build in a new process (40 CPU-s) in every mutant's run,
# which also starts in the background as a run begins (tests/site.py): in the copy, neither.
_os.environ["AGENT_MUTATION_COPY"] = "1"
SITE_FIXTURES = {"built_site", "served_site", "browser"}


def pytest_collection_modifyitems(config, items):  # added by tests/mutation.py to its copy only
    kept = [item for item in items if not SITE_FIXTURES & set(getattr(item, "fixturenames", ()))]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


def pytest_runtest_teardown(item):  # added by tests/mutation.py to its copy only
    import ctypes
    import ctypes.util
    import os
    import sys

    if not sys.platform.startswith("linux"):
        return
    ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).prctl(36, 0, 0, 0, 0)
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
"""


def mutmut_settings(target: dict, into: Path) -> str:
    """The [tool.mutmut] table for this target. Everything but the target's files is copied as
    it is, so the tests find the rest of the project beside the mutated code."""
    others = sorted(
        entry.name for entry in into.iterdir()
        if entry.name not in ("mutants", ".git") and not entry.name.startswith(".mutation")
    )
    lines = [
        "\n[tool.mutmut]",
        f"source_paths = {quoted(target['files'])}",
        f"also_copy = {quoted(others)}",
        f"pytest_add_cli_args_test_selection = {quoted(target['tests'])}",
        'pytest_add_cli_args = ["-p", "no:xdist", "-p", "no:randomly",'
        ' "-p", "tests.mutation_watchdog", "-q"]',
        "use_git_change_detection = false",
    ]
    return "\n".join(lines) + "\n"


def quoted(names: list[str]) -> str:
    return "[" + ", ".join(f'"{name}"' for name in names) + "]"


def mutant_patterns(target: dict) -> list[str]:
    """mutmut's names for the mutants of the chosen functions (all of the file's when none)."""
    patterns = []
    for file in target["files"]:
        module = file.removesuffix(".py").replace("/", ".")
        for function in target.get("functions", ["*"]):
            patterns.append(f"{module}.{function}__mutmut_*")
    return patterns


def tally(into: Path, patterns: list[str]) -> Counter:
    """How many mutants of the chosen functions had each outcome; the ones left are named."""
    outcomes = Counter()
    for name, status in outcomes_of(into, patterns):
        outcomes[status] += 1
        if status not in ("killed", "timeout"):
            print(f"  {status}: {name}")
    return outcomes


def outcomes_of(into: Path, patterns: list[str]) -> list[tuple[str, str]]:
    """(mutant, outcome) of the chosen functions, from `mutmut results --all true`."""
    from fnmatch import fnmatch

    listed = subprocess.run(
        [mutmut(), "results", "--all", "true"], cwd=into, capture_output=True, text=True,
        check=True,
    ).stdout
    found = []
    for line in listed.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name and any(fnmatch(name, pattern) for pattern in patterns):
            found.append((name, status))
    return found


def mutmut() -> str:
    return str(Path(sys.executable).with_name("mutmut"))


def run(name: str, children: int) -> Counter:
    target = TARGETS[name]
    into = WORK / name
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    copy_project(into)
    with open(into / "pyproject.toml", "a", encoding="utf-8") as settings:
        settings.write(mutmut_settings(target, into))
    with open(into / "tests" / "conftest.py", "a", encoding="utf-8") as conftest:
        conftest.write(GUARD)
    patterns = mutant_patterns(target)
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": ""}
    environment.pop("PYTHONDONTWRITEBYTECODE")
    subprocess.run(
        [mutmut(), "run", "--max-children", str(children), *patterns],
        cwd=into, env=environment, check=False,
    )
    outcomes = tally(into, patterns)
    total = sum(outcomes.values())
    killed = outcomes["killed"] + outcomes["timeout"]
    share = f"{100 * killed / total:.1f}%" if total else "-"
    print(f"{name}: {total} mutants, {killed} killed ({share}), {total - killed} left: "
          f"{dict(outcomes)}")
    return outcomes


# Run in the run's mutants/ folder, one process for every mutant left: mutmut's trampolines read
# MUTANT_UNDER_TEST at each call, so the same imported code takes each mutant in turn.
# A mutant whose tests wait for ever ends the process through the runs' own per-test limit
# (tests/mutation_watchdog.py): counted as a timeout, as mutmut counts one.
RECHECK = """
import os, sys
import pytest
sys.path.insert(0, os.getcwd())
files = sys.argv[1:]
for name in sys.stdin.read().split():
    os.environ["MUTANT_UNDER_TEST"] = name
    code = pytest.main([*files, "-q", "-x", "-p", "no:xdist", "-p", "no:randomly",
                        "-p", "no:cacheprovider", "-p", "tests.mutation_watchdog"])
    print(f"RECHECK {'survived' if code == 0 else 'killed'}: {name}", file=sys.__stderr__)
"""


def recheck(name: str, files: list[str]) -> None:
    """After new tests: run them (with the tests of the same name, copied in) against each mutant
    the last run of `name` left alive, without running mutmut again. Prints each one's fate."""
    target = TARGETS[name]
    into = WORK / name
    if not (into / "mutants").is_dir():
        sys.exit(f"no run of {name} to recheck: run `python -m tests.mutation {name}` first")
    # a test's id names its file; a run made before the per-test limit has no copy of it
    for file in {test.partition("::")[0] for test in files} | {"tests/mutation_watchdog.py"}:
        shutil.copy2(ROOT / file, into / "mutants" / file)
    # First with no mutant planted: tests that fail there (a fixture of tests/conftest.py newer
    # than the run's copy) would count every mutant as killed.
    clean = subprocess.run([sys.executable, "-c", RECHECK, *files], cwd=into / "mutants",
                           input="no-mutant", text=True, capture_output=True, check=False)
    if "RECHECK survived: no-mutant" not in clean.stderr:
        sys.exit(f"{clean.stdout[-3000:]}\n{name}: {', '.join(files)} fail with no mutant planted, "
                 f"in the copy {into}: run `python -m tests.mutation {name}` again first")
    left = [mutant for mutant, status in outcomes_of(into, mutant_patterns(target))
            if status not in ("killed", "timeout")]
    fates, to_run = [], left
    while to_run:  # a mutant whose tests end their own process (mutmut's "segfault") ends this one
        done = subprocess.run([sys.executable, "-c", RECHECK, *files], cwd=into / "mutants",
                              input="\n".join(to_run), text=True, capture_output=True,
                              check=False)
        ran = [line for line in done.stderr.splitlines() if line.startswith("RECHECK ")]
        fates += ran
        if len(ran) < len(to_run):
            ended = ("timeout" if done.returncode == MUTMUT_TIMEOUT
                     else "ended the tests' process")
            fates.append(f"RECHECK {ended}: {to_run[len(ran)]}")
        to_run = to_run[len(ran) + 1:]
    for line in fates:
        print("  " + line.removeprefix("RECHECK "))
    killed = sum(line.startswith(("RECHECK killed", "RECHECK timeout")) for line in fates)
    print(f"{name}: of {len(left)} left by the last run, {killed} killed by {', '.join(files)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=", ".join(TARGETS))
    parser.add_argument("--list", action="store_true", help="list the targets and stop")
    parser.add_argument("--recheck", nargs="+", metavar="TEST_FILE",
                        help="run these test files against the mutants the last run of each "
                             "target left alive (no new mutmut run)")
    parser.add_argument("--children", type=int, default=1,
                        help="mutants tested at once (default 1: the machine is shared)")
    options = parser.parse_args()
    if options.list or not options.targets:
        for name, target in TARGETS.items():
            print(f"{name}: {', '.join(target['files'])} "
                  f"{target.get('functions', '')} <- {', '.join(target['tests'])}")
        return
    unknown = [name for name in options.targets if name not in TARGETS]
    if unknown:
        parser.error(f"no such target {', '.join(unknown)}; the targets: {', '.join(TARGETS)}")
    for name in options.targets:
        if options.recheck:
            recheck(name, options.recheck)
        else:
            run(name, options.children)


if __name__ == "__main__":
    main()
