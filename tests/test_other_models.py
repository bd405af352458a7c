"""The page "Other models, and no key": its table and its settings come from the endpoint rows.

The rows themselves (scripted/endpoints.py) are pinned at the server in tests/test_endpoints.py;
here, what the page makes of them: one table row per endpoint in both languages, "unknown" where a
row does not know, and the same settings in the bash and the PowerShell tab."""

import re

import pytest

from docsgen.endpoints import LABELS, LOCAL, endpoint_files, learner_settings
from scripted import ROOT
from scripted.endpoints import BY_NAME, ENDPOINTS

def generated(path: str) -> str:
    """A file the page includes, made inside the test that reads it (made once at import, it
    would be made before a mutation run plants its bug, and no test would see one)."""
    return endpoint_files()[path]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_page_includes_a_table_with_one_row_per_endpoint_and_unknown_where_unknown(language):
    page = (ROOT / f"docs_{language}" / "other-models.md").read_text(encoding="utf-8")
    assert f'--8<-- "endpoints/{language}/table.md"' in page
    header, rule, *rows = generated(f"endpoints/{language}/table.md").splitlines()
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
    header, rule, *rows = generated(f"endpoints/{language}/table.md").splitlines()
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
    header, rule, *rows = generated(f"endpoints/{language}/table.md").splitlines()
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
            "| unknown | openai | 32,768 / 32,768 | unknown | unknown | unknown |")
        assert by_title[BY_NAME["vllm"].title].endswith(
            "| unknown | nothing | `thinking`, `cache_control`, `tool_result.is_error` | thinking "
            "blocks signed with a random id that nothing checks | input and output (at the end "
            "only) | anthropic | unknown / unknown | `chatcmpl-tool-…` | dropped | unknown |")


@pytest.mark.parametrize("name", LOCAL)
def test_the_bash_and_powershell_tabs_set_the_same_variables_as_the_row(name):
    bash = re.findall(r"^export (\w+)=(.*)$", generated(f"endpoints/{name}.sh"), re.MULTILINE)
    powershell = re.findall(r'^\$env:(\w+) = "(.*)"$', generated(f"endpoints/{name}.ps1"), re.M)
    assert bash == powershell == list(learner_settings(BY_NAME[name]).items())
    assert ("ANTHROPIC_API_KEY", "") in bash  # a key for Claude is not sent to a local server


@pytest.mark.parametrize("language", ["en", "ja"])
def test_every_rows_notes_are_on_the_page_in_both_languages(language):
    from docsgen.endpoints import NOTES_JA

    page = (ROOT / f"docs_{language}" / "other-models.md").read_text(encoding="utf-8")
    assert f'--8<-- "endpoints/{language}/notes.md"' in page
    with_notes = {endpoint.name for endpoint in ENDPOINTS if endpoint.notes}
    assert set(NOTES_JA) == with_notes  # a new note needs its translation, a gone one goes
    listed = generated(f"endpoints/{language}/notes.md")
    for endpoint in ENDPOINTS:
        said = endpoint.notes if language == "en" else NOTES_JA.get(endpoint.name, "")
        if said:
            assert f"- **{endpoint.title}**: {said}\n" in listed
    # the setting without which LiteLLM's OpenAI-format route calls /v1/responses
    assert "use_chat_completions_url_for_anthropic_messages: true" in listed


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_table_says_what_each_row_does_with_tool_choice(language):
    header, rule, *rows = generated(f"endpoints/{language}/table.md").splitlines()
    last = [row.strip("| ").split(" | ")[-1] for row in rows]
    labels = LABELS[language]
    for endpoint, cell in zip(ENDPOINTS, last, strict=True):
        if endpoint.tool_choice is None:
            assert cell == labels["unknown"], endpoint.name
        else:
            assert cell == labels["tool_choice"][endpoint.tool_choice], endpoint.name
    assert last[ENDPOINTS.index(BY_NAME["ollama"])] == labels["tool_choice"]["ignored"]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_replays_say_what_answered_them(language):
    page = (ROOT / f"docs_{language}" / "other-models.md").read_text(encoding="utf-8")
    assert f'--8<-- "endpoints/{language}/recordings.md"' in page
    assert "the replies a real model gave" not in page and "本物のモデルが返した応答" not in page
    listed = generated(f"endpoints/{language}/recordings.md").splitlines()
    shipped = sorted((ROOT / "tests" / "recordings").rglob("*.jsonl"))
    assert len(listed) == len(shipped) > 0
    for path, line in zip(shipped, listed, strict=True):
        scripted = '"upstream": "scripted model' in path.read_text(encoding="utf-8")[:5000]
        said = LABELS[language]["scripted"].split("(")[0].split("（")[0]
        assert (said in line) is scripted, line


def test_ollamas_steps_start_no_second_server_and_leave_the_prompt_room():
    from docsgen.endpoints import OLLAMA_CONTEXT

    for language in ("en", "ja"):
        page = (ROOT / f"docs_{language}" / "other-models.md").read_text(encoding="utf-8")
        ollama = page[page.index("### Ollama"):page.index("### llama.cpp")]
        assert "ollama serve\n" not in ollama  # the installer's app or service is the server
        assert ollama.index("launchctl setenv") < ollama.index("ollama pull {{")  # set, then pull
        for system in ("launchctl setenv", "systemctl edit ollama.service", "environment"):
            assert system in ollama or system == "environment" and "環境変数" in ollama
        assert "{{ endpoints.ollama.download_gb }} GB" in ollama
        assert "endpoints/ollama.sh" in ollama and "endpoints/ollama.ps1" in ollama
    max_tokens = int(BY_NAME["ollama"].settings["MAX_TOKENS"])
    assert ("MAX_TOKENS", str(max_tokens)) in learner_settings(BY_NAME["ollama"]).items()
    assert max_tokens <= OLLAMA_CONTEXT // 2  # the prompt keeps at least half the context


def test_the_usage_lines_words_on_the_page_match_the_code():
    from plumbing.model import CHARACTERS_PER_TOKEN
    from plumbing.screen import FAR_BELOW

    english = (ROOT / "docs_en" / "other-models.md").read_text(encoding="utf-8")
    japanese = (ROOT / "docs_ja" / "other-models.md").read_text(encoding="utf-8")
    assert (FAR_BELOW, CHARACTERS_PER_TOKEN) == (2, 4)  # the pages say "half", "four"
    english = " ".join(english.split())
    assert "less than half of the request" in english
    assert "(about four characters a token)" in english
    assert "半分に満たない" in japanese and "1 トークンを約 4 文字" in japanese
    for said in ("not reported", "no cache figures: the endpoint sent none", "no cache"):
        assert said in english and said in japanese


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_real_sessions_table_says_what_came_back_and_what_the_server_logged(language):
    """Made from tests/recordings/real/: one row per recording, what the gateway sent back (an
    empty reply after a 200 is not prose), and the error the server behind it logged."""
    from docsgen.endpoints import REAL_LABELS

    page = (ROOT / f"docs_{language}" / "other-models.md").read_text(encoding="utf-8")
    assert f'--8<-- "endpoints/{language}/real.md"' in page
    labels = REAL_LABELS[language]
    rows = {row.split(" | ")[0].strip("| `"): row.split(" | ")
            for row in generated(f"endpoints/{language}/real.md").splitlines()[2:]}
    shipped = sorted(path.stem for path in (ROOT / "tests" / "recordings" / "real").glob("*.jsonl"))
    assert sorted(rows) == shipped
    function_calling = rows["v1_litellm_llama_cpp_python"]
    assert function_calling[2] == "llama-cpp-python (--chat_format chatml-function-calling)"
    assert function_calling[3:] == [
        labels["litellm"], labels["empty"],
        "`ValueError: Automatic streaming tool choice is not supported`", "1 |"]
    assert rows["v1_litellm_llama_cpp_python_gguf"][4] == labels["empty"]
    assert rows["v5_litellm_llama_cpp_python"][4] == labels["error"].format(status=500, times=3)
    assert rows["v1_litellm_llama_cpp_python_chatml"][4] == labels["prose"]
    assert rows["v1_llama_server_messages"][3] == labels["direct"]
    assert rows["v1_litellm_backend_stops_error"][4] == labels["then"].join(
        [labels["error_event"], labels["error"].format(status=500, times=3)])
