"""The page "Other models, and no key": its table and its settings come from the endpoint rows.

The rows themselves (scripted/endpoints.py) are pinned at the server in tests/test_endpoints.py;
here, what the page makes of them: one table row per endpoint in both languages, "unknown" where a
row does not know, and the same settings in the bash and the PowerShell tab."""

import re

import pytest

from docsgen.endpoints import LABELS, LOCAL, endpoint_files, learner_settings
from scripted import ROOT
from scripted.endpoints import BY_NAME, ENDPOINTS

FILES = endpoint_files()


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_page_includes_a_table_with_one_row_per_endpoint_and_unknown_where_unknown(language):
    page = (ROOT / f"docs_{language}" / "other-models.md").read_text(encoding="utf-8")
    assert f'--8<-- "endpoints/{language}/table.md"' in page
    header, rule, *rows = FILES[f"endpoints/{language}/table.md"].splitlines()
    columns = LABELS[language]["columns"]
    assert header == "| " + " | ".join(columns) + " |"
    cells = [row.strip("| ").split(" | ") for row in rows]
    assert [row[0] for row in cells] == [endpoint.title for endpoint in ENDPOINTS]
    assert all(len(row) == len(columns) for row in cells)
    thinking = 4  # the column "Thinking"
    for endpoint, row in zip(ENDPOINTS, cells, strict=True):
        if endpoint.thinking is None:
            assert row[thinking] == LABELS[language]["unknown"], endpoint.name
        else:
            assert row[thinking] == LABELS[language]["thinking"][endpoint.thinking]
    refuses = cells[ENDPOINTS.index(BY_NAME["litellm-openai"])][2]
    assert refuses == "`thinking`"  # a field the row refuses, named as the API names it


# What the Usage column says of a row, word for word: the counts it carries (None: unknown),
# and where they come (usage_at_start: True at the start, False at the end only, None unknown,
# which adds nothing). A row of each kind is in the table.
USAGE_CELLS = {
    "en": {"anthropic": "with cache counts", "ollama": "input and output",
           "vllm": "input and output (at the end only)", "kimi": "unknown"},
    "ja": {"anthropic": "キャッシュの数も", "ollama": "入力と出力",
           "vllm": "入力と出力（最後にだけ）", "kimi": "不明"},
}


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_usage_column_says_what_each_row_counts_and_when(language):
    header, rule, *rows = FILES[f"endpoints/{language}/table.md"].splitlines()
    column = LABELS[language]["columns"].index("Usage" if language == "en" else "使用量")
    cells = {endpoint.name: row.strip("| ").split(" | ")[column]
             for endpoint, row in zip(ENDPOINTS, rows, strict=True)}
    assert {name: cells[name] for name in USAGE_CELLS[language]} == USAGE_CELLS[language]
    assert [BY_NAME[name].usage_at_start for name in ("anthropic", "ollama", "vllm")] == [
        True, None, False]
    labels = LABELS[language]
    for endpoint in ENDPOINTS:
        if endpoint.usage is None:
            expected = labels["unknown"]
        elif "cache_read_input_tokens" in endpoint.usage:
            expected = labels["usage_cache"]
        else:
            expected = labels["usage_plain"]
        if endpoint.usage is not None and endpoint.usage_at_start is False:
            expected += labels["usage_end"]
        assert cells[endpoint.name] == expected, endpoint.name


def expected_cells(endpoint, labels: dict) -> dict[str, str]:
    """What the columns other than Thinking and Usage say of a row, from its fields."""
    headers = {"x-api-key": "`x-api-key`", "bearer": f"`{labels['bearer']}`"}
    if endpoint.model == "":
        limits = labels["model_table"]
    else:
        output = f"{endpoint.max_output:,}" if endpoint.max_output else labels["unknown"]
        window = f"{endpoint.context_window:,}" if endpoint.context_window else labels["unknown"]
        limits = f"{output} / {window}"
    survives = {None: labels["unknown"], True: labels["yes"], False: labels["no"]}
    return {
        "key": ", ".join(headers[name] for name in endpoint.auth or ()) or labels["unknown"],
        "refuses": ", ".join(f"`{name}`" for name in endpoint.rejects) or labels["none"],
        "ignores": ", ".join(f"`{name}`" for name in endpoint.ignores) or labels["none"],
        "errors": endpoint.error_shape or labels["unknown"],
        "limits": limits,
        "ids": f"`{endpoint.tool_id_prefix}…`" if endpoint.tool_id_prefix else labels["unknown"],
        "is_error": survives[endpoint.is_error_survives],
    }


@pytest.mark.parametrize("language", ["en", "ja"])
def test_every_column_says_what_its_row_holds_and_unknown_where_it_holds_nothing(language):
    header, rule, *rows = FILES[f"endpoints/{language}/table.md"].splitlines()
    places = {"key": 1, "refuses": 2, "ignores": 3, "errors": 6, "limits": 7, "ids": 8,
              "is_error": 9}
    for endpoint, row in zip(ENDPOINTS, rows, strict=True):
        cells = row.strip("| ").split(" | ")
        shown = {column: cells[place] for column, place in places.items()}
        assert shown == expected_cells(endpoint, LABELS[language]), endpoint.name
    if language == "en":  # two rows word for word: every kind of cell, as a reader sees it
        by_title = {row.strip("| ").split(" | ")[0]: row for row in rows}
        assert by_title[BY_NAME["llama.cpp"].title].endswith(
            "| unknown | nothing | nothing | thinking blocks whose signature is the empty string "
            "| unknown | openai | 32,768 / 32,768 | unknown | unknown |")
        assert by_title[BY_NAME["vllm"].title].endswith(
            "| unknown | nothing | `thinking`, `cache_control`, `tool_result.is_error` | thinking "
            "blocks signed with a random id that nothing checks | input and output (at the end "
            "only) | anthropic | unknown / unknown | `chatcmpl-tool-…` | dropped |")


@pytest.mark.parametrize("name", LOCAL)
def test_the_bash_and_powershell_tabs_set_the_same_variables_as_the_row(name):
    bash = re.findall(r"^export (\w+)=(.*)$", FILES[f"endpoints/{name}.sh"], re.MULTILINE)
    powershell = re.findall(r'^\$env:(\w+) = "(.*)"$', FILES[f"endpoints/{name}.ps1"], re.M)
    assert bash == powershell == list(learner_settings(BY_NAME[name]).items())
    assert ("ANTHROPIC_API_KEY", "") in bash  # a key for Claude is not sent to a local server
