"""docsgen/endpoints.py: the values the page "Other models, and no key" quotes in its prose
({{ endpoints.NAME.FIELD }}, {{ real.v1_... }}), each the one in its row, its constant or its
recording. The mutation run of 2026-11-28 found no test reading endpoint_numbers() outside a
site build."""

import json
import re

import anthropic
import pytest

from docsgen.endpoints import LOCAL, endpoint_numbers, learner_settings
from plumbing.model import reported_usage
from scripted import ROOT
from scripted.endpoints import BY_NAME
from scripted.live_local import CONTEXT

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
