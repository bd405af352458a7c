"""docsgen/endpoints.py: the values the page "Other models, and no key" quotes in its prose
({{ endpoints.NAME.FIELD }}, {{ real.v1_... }}), each the one in its row, its constant or its
recording. The mutation run of 2026-11-28 found no test reading endpoint_numbers() outside a
site build."""

import json
import re

import anthropic
import pytest

from docsgen.endpoints import LOCAL, NOTES_JA, endpoint_files, endpoint_numbers, learner_settings
from plumbing.model import reported_usage
from scripted import ROOT
from scripted.endpoints import BY_NAME
from scripted.live_local import CONTEXT, MASTER_KEY, litellm_config

RECORDING = ROOT / "tests" / "recordings" / "real" / "v1_litellm_llama_server.jsonl"


@pytest.mark.parametrize("language", ["en", "ja"])
def test_every_value_the_page_quotes_is_there(language):
    page = (ROOT / f"docs_{language}" / "other-models.md").read_text(encoding="utf-8")
    quoted = set(re.findall(r"\{\{ *((?:endpoints|real)\.[^ }]+) *\}\}", page))
    assert {"real.v1_sent", "endpoints.ollama.prompt_room"} <= quoted
    assert quoted <= set(endpoint_numbers())


def test_each_local_servers_values_are_its_rows():
    numbers = endpoint_numbers()
    for name in LOCAL:
        row = BY_NAME[name]
        assert numbers[f"endpoints.{name}.model"] == row.model
        assert numbers[f"endpoints.{name}.base_url"] == row.base_url
        for setting, value in row.settings.items():
            assert numbers[f"endpoints.{name}.{setting}"] == value
    assert numbers["endpoints.llama.cpp.context"] == str(BY_NAME["llama.cpp"].context_window)
    assert "endpoints.ollama.context" in numbers and "endpoints.ollama.MAX_TOKENS" in numbers


def test_ollamas_prompt_room_is_its_context_less_max_tokens():
    """The page: "MAX_TOKENS=16384 leaves 49,152 of its 65536 tokens" for the prompt."""
    numbers = endpoint_numbers()
    room = int(numbers["endpoints.ollama.prompt_room"].replace(",", ""))
    assert room + int(numbers["endpoints.ollama.MAX_TOKENS"]) == int(
        numbers["endpoints.ollama.context"])
    assert numbers["endpoints.ollama.prompt_room"] == f"{room:,}" and room >= 1_000
    assert (numbers["endpoints.ollama.download_gb"], numbers["endpoints.ollama.vram_gb"]) == (
        "19", "24")


def test_litellms_values_are_the_ones_its_tabs_set():
    numbers = endpoint_numbers()
    settings = learner_settings(BY_NAME["litellm-openai"])
    assert numbers["endpoints.litellm.url"] == settings["ANTHROPIC_BASE_URL"]
    assert numbers["endpoints.litellm.alias"] == settings["MODEL_ID"]
    assert numbers["endpoints.litellm.MAX_TOKENS"] == settings["MAX_TOKENS"]
    assert numbers["endpoints.litellm.context"] == f"{CONTEXT:,}" == "8,192"


def test_the_real_recordings_figures_are_what_the_usage_line_would_compare():
    """Sent: the request's size as plumbing/model.py estimates it for the usage line; counted:
    what the server's last usage said it read."""
    lines = [json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]
    [request] = [line["body"] for line in lines if line["kind"] == "request"]
    usage = anthropic.types.Usage(input_tokens=0, output_tokens=0)
    sent = reported_usage(usage, request).sent_estimate
    deltas = [line["data"]["usage"] for line in lines
              if line["kind"] == "event" and line["data"]["type"] == "message_delta"]
    counted = sum(deltas[-1].get(name) or 0 for name in (
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    numbers = endpoint_numbers()
    assert (numbers["real.v1_sent"], numbers["real.v1_counted"]) == (f"{sent:,}", f"{counted:,}")
    assert sent > counted > 0


# -- the files the page includes --


@pytest.mark.parametrize("language", ["en", "ja"])
def test_every_file_the_page_includes_is_made(language):
    page = (ROOT / f"docs_{language}" / "other-models.md").read_text(encoding="utf-8")
    included = re.findall(r'--8<-- "(endpoints/[^"]+)"', page)
    files = endpoint_files()
    assert "endpoints/litellm.yaml" in included and "endpoints/ollama.service.ini" in included
    for path in included:
        assert isinstance(files.get(path), str) and files[path].strip(), path


def test_the_service_override_and_litellms_config_are_the_ones_the_steps_use():
    files = endpoint_files()
    assert files["endpoints/ollama.service.ini"] == (
        '[Service]\nEnvironment="OLLAMA_CONTEXT_LENGTH=65536"\n')
    assert files["endpoints/litellm.yaml"] == litellm_config("http://localhost:8000/v1")
    assert "http://localhost:8000/v1" in files["endpoints/litellm.yaml"]


@pytest.mark.parametrize("name", [*LOCAL, "litellm"])
def test_each_tab_sets_the_variables_the_sdk_and_the_scripts_read_in_order(name):
    """The SDK reads ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY (empty, so
    that a key for Claude is not sent to a local server); the scripts read MODEL_ID and the row's
    own settings (MAX_TOKENS)."""
    files = endpoint_files()
    row = BY_NAME["litellm-openai" if name == "litellm" else name]
    bash = re.findall(r"^export (\w+)=(.*)$", files[f"endpoints/{name}.sh"], re.MULTILINE)
    settings = dict(bash)
    assert [variable for variable, _ in bash] == [
        "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY", "MODEL_ID",
        *(["MAX_TOKENS"] if name == "litellm" else row.settings)]
    assert settings["ANTHROPIC_API_KEY"] == "" and settings["ANTHROPIC_AUTH_TOKEN"] != ""
    if name == "litellm":
        assert settings["ANTHROPIC_AUTH_TOKEN"] == MASTER_KEY
        assert settings["ANTHROPIC_BASE_URL"] == "http://localhost:4000"
    else:
        assert (settings["ANTHROPIC_BASE_URL"], settings["MODEL_ID"]) == (row.base_url, row.model)
    powershell = re.findall(r'^\$env:(\w+) = "(.*)"$', files[f"endpoints/{name}.ps1"], re.M)
    assert powershell == bash


# -- the table, the sources, the notes and the recordings, as the page shows them --


def test_the_tables_rule_has_one_cell_per_column():
    header, rule, *rows = endpoint_files()["endpoints/en/table.md"].splitlines()
    assert rule == "|" + " --- |" * 11


def test_each_source_is_a_link_where_it_is_an_address_and_text_where_it_is_not():
    lines = endpoint_files()["endpoints/en/sources.md"].split("\n")
    assert lines[-1] == "" and lines[-2] != ""  # one line break at the end, no blank line
    assert lines[0] == (
        "- **Claude API (Anthropic)**: <https://platform.claude.com/docs/en/api/messages>; "
        "<https://platform.claude.com/docs/en/api/errors>; "
        "<https://platform.claude.com/docs/en/build-with-claude/streaming>; scripted/models.py "
        "(each model's figures and thinking rules, with their pages)")


def test_the_japanese_notes_have_a_line_only_for_a_row_translated():
    notes = endpoint_files()["endpoints/ja/notes.md"].splitlines()
    assert len(notes) == len([row for row in BY_NAME if row in NOTES_JA])


def test_each_recording_is_said_as_its_header_says_who_answered():
    lines = endpoint_files()["endpoints/en/recordings.md"].split("\n")
    assert lines[-1] == "" and "" not in lines[:-1]
    assert "- `tests/recordings/v1_demo.jsonl`: a scripted model (v1_demo.yaml): no real model " \
           "answered" in lines
    real = RECORDING.read_text(encoding="utf-8").split("\n", 1)[0]
    header = json.loads(real)
    assert (f"- `tests/recordings/real/{RECORDING.name}`: recorded from {header['model']} "
            f"({header['upstream']}) on {header['date']}") in lines
