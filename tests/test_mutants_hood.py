"""docsgen/hood.py: "Under the hood" as a reader sees it, made in the test's own process.

The checks of tests/test_hood.py read the built site, which a child process makes: the mutation
run saw no test reach this module but one, which built the site for every mutant. Here the pages
are made from small recordings written below, each with what a wrong rule would show
differently: a main agent whose Task calls start two subagents whose requests arrive
interleaved, a reply that is an HTTP error, a request sent again unchanged, a reply with and one
without cache figures, sizes above 1,000 bytes (written with a separator), and a compacted run.
The same readings as test_hood.py's (each request put back together from the page, the nesting
under the Task calls) are applied to these pages.
"""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from docsgen.hood import (
    FIRST_CALLS,
    LABELS,
    Call,
    Page,
    call_tree,
    from_session,
    gist,
    hide_folder,
    hood_files,
    load_recording,
    source_label,
    summary_requests,
)
from tests.test_hood import (
    calls_of,
    classes,
    code_text,
    element_at,
    nesting_problems,
    own,
    rebuilt_request,
    shown_nesting,
)

SVG = "{http://www.w3.org/2000/svg}"
SYSTEM = "You are a coding agent. " * 50  # 1,200 characters: every size is above 1,000 bytes
SUB_SYSTEM = "You explore, and change nothing."
TOOLS = [
    {"name": "bash", "input_schema": {"type": "object"}},
    {"name": "Task", "input_schema": {"type": "object"}},
]
TASK = "Fix the failing test in cart.py"
FIND, READ = "Find the failing test", "Read cart.py and say what total() does"


def record(track: str, messages: list, reply: dict | None, *, status: int = 200,
           system: str | None = SYSTEM, tools: list | None = TOOLS) -> dict:
    """One exchange as `python -m scripted.demo --record` saves it; a system prompt or tools of
    None are left out of the request, as a session from Claude may hold one."""
    body = {"model": "claude-sonnet-5-5", "max_tokens": 1000, "system": system, "tools": tools,
            "messages": messages}
    raw = json.dumps({key: value for key, value in body.items() if value is not None},
                     ensure_ascii=False)
    return {"track": track, "size": len(raw.encode("utf-8")), "raw": raw,
            "reply": {"status": status, "body": reply}}


def reply(content: list, stop: str = "end_turn", **usage: int) -> dict:
    return {"content": content, "stop_reason": stop,
            "usage": {"input_tokens": 1234, "output_tokens": 56, **usage}}


def text(words: str) -> dict:
    return {"type": "text", "text": words}


def task(ident: str, description: str, prompt: str) -> dict:
    return {"type": "tool_use", "id": ident, "name": "Task",
            "input": {"description": description, "prompt": prompt, "agent_type": "explore"}}


def result(ident: str, words: str) -> dict:
    return {"type": "tool_result", "tool_use_id": ident, "content": words}


FIRST_REPLY = [
    {"type": "thinking", "thinking": "Two things to look at.", "signature": "sig"},
    text("Two subagents will look."),
    task("toolu_find", "find the test", FIND),
    task("toolu_read", "read the cart", READ),
]
READ_REPLY = [{"type": "tool_use", "id": "toolu_cat", "name": "bash",
               "input": {"command": "cat cart.py"}}]
REPORTS = [result("toolu_find", "test_total fails"),
           result("toolu_read", "total() ignores the discount")]
AFTER_REPORTS = [{"role": "user", "content": TASK}, {"role": "assistant", "content": FIRST_REPLY},
                 {"role": "user", "content": REPORTS}]
# In arrival order: the second Task's subagent sends first, and the two interleave.
RECORDING = [
    record("default", [{"role": "user", "content": TASK}],
           reply(FIRST_REPLY, "tool_use", cache_creation_input_tokens=1000,
                 cache_read_input_tokens=0)),
    record(READ, [{"role": "user", "content": READ}], reply(READ_REPLY, "tool_use"),
           system=SUB_SYSTEM, tools=TOOLS[:1]),
    record(FIND, [{"role": "user", "content": FIND}], reply([text("test_total fails")]),
           system=SUB_SYSTEM, tools=TOOLS[:1]),
    record(READ, [{"role": "user", "content": READ},
                  {"role": "assistant", "content": READ_REPLY},
                  {"role": "user", "content": [result("toolu_cat", "def total(p): ...")]}],
           reply([text("total() ignores the discount")]), system=SUB_SYSTEM, tools=TOOLS[:1]),
    record("default", AFTER_REPORTS,
           {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
           status=529),
    record("default", AFTER_REPORTS, reply([text("Fixed: total() applies the discount now.")],
                                           cache_read_input_tokens=2000)),
]
SIZES = [exchange["size"] for exchange in RECORDING]
# request numbers (1-based, as received) in the order the page shows them, and their labels
SHOWN = [(1, "1"), (3, "A1"), (2, "B1"), (4, "B2"), (5, "2"), (6, "3")]


def page_of(html: str) -> ET.Element:
    return element_at(html, '<section class="hood"')


# hood_files()'s pages for the test running now, made once per test (each test makes its own:
# mutation runs give a mutant only the tests that called its function themselves)
MADE: dict[tuple[int, str], tuple[list[dict], dict[Path, str]]] = {}


@pytest.fixture(autouse=True)
def pages_made_by_each_test():
    MADE.clear()
    yield
    MADE.clear()


def fragment(recording: list[dict], language: str = "en", part: str = "",
             version: str = "v3") -> ET.Element:
    key = (id(recording), version)  # the recording is kept with its pages: its id stays its own
    if key not in MADE:
        MADE[key] = (recording, hood_files({version: recording}))
    name = f"{version}-{part}.html" if part else f"{version}.html"
    return page_of(MADE[key][1][Path("hood", language, name)])


def summary_line(section: ET.Element) -> str:
    return next(p for p in section.iter("p") if "hood-summary" in classes(p)).text


def facts(call: ET.Element) -> tuple[str, str]:
    """A call's name and the facts after it, as its one closed line shows them."""
    strong = call.find("summary").find("strong")
    return strong.text, strong.tail.removeprefix(" · ")


# -- every call, where it belongs --


def test_hood_files_writes_each_language_whole_and_split_and_the_recording():
    files = hood_files({"v3": RECORDING})
    assert sorted(map(str, files)) == sorted(
        ["hood/records/v3.json"]
        + [f"hood/{language}/v3{part}.html" for language in ("en", "ja")
           for part in ("", "-first", "-rest")]
    )
    assert json.loads(files[Path("hood", "records", "v3.json")]) == RECORDING


@pytest.mark.parametrize("language", ["en", "ja"])
def test_every_call_is_shown_once_in_page_order_with_its_size_and_track(language):
    section = fragment(RECORDING, language)
    assert (section.get("data-version"), section.get("data-calls")) == ("v3", "6")
    assert section.get("data-search-exclude") == "data-search-exclude"
    shown = calls_of(section)
    assert [(int(call.get("data-request")), call.get("id")) for call in shown] == [
        (number, f"hood-v3-{label}") for number, label in SHOWN]
    word = LABELS[language]["call"]
    for call, (number, label) in zip(shown, SHOWN, strict=True):
        exchange = RECORDING[number - 1]
        assert int(call.get("data-size")) == exchange["size"]
        assert call.get("data-track") == exchange["track"]
        kind = "hood-main" if exchange["track"] == "default" else "hood-sub"
        assert classes(call) == {"hood-call", kind}
        assert facts(call)[0] == word.format(label)
        assert call.get("open") is None


def test_a_calls_line_gives_its_size_messages_and_what_came_back():
    shown = {call.get("id"): facts(call)[1] for call in calls_of(fragment(RECORDING))}
    assert shown["hood-v3-1"] == (
        f"{SIZES[0]:,} bytes · messages: 1, new: 1 · stop_reason tool_use · "
        "tokens: in 1,234, out 56, cache write 1,000, cache read 0")
    assert shown["hood-v3-B1"] == (
        f"{SIZES[1]:,} bytes · messages: 1, new: 1 · stop_reason tool_use · "
        "tokens: in 1,234, out 56")  # no cache figures where the usage has none
    assert shown["hood-v3-B2"].startswith(f"{SIZES[3]:,} bytes · messages: 3, new: 1 · ")
    assert shown["hood-v3-2"] == f"{SIZES[4]:,} bytes · messages: 3, new: 1 · HTTP 529"
    assert shown["hood-v3-3"] == (
        f"{SIZES[5]:,} bytes · messages: 3, new: 0 · stop_reason end_turn · "
        "tokens: in 1,234, out 56, cache write 0, cache read 2,000")


@pytest.mark.parametrize("language", ["en", "ja"])
def test_each_request_can_be_put_back_together_from_the_page_exactly_as_sent(language):
    whole = fragment(RECORDING, language)
    split = ET.Element("section")
    split.extend([fragment(RECORDING, language, "first"), fragment(RECORDING, language, "rest")])
    for section in (whole, split):
        order = list(section.iter())
        page = {element.get("id"): element for element in order if element.get("id")}
        assert len(page) == len([element for element in order if element.get("id")])  # unique
        for call in calls_of(section):
            sent = json.loads(RECORDING[int(call.get("data-request")) - 1]["raw"])
            assert rebuilt_request(call, page) == sent, call.get("id")
            for reference in call.iter():
                if "hood-ref" in classes(reference):  # a pointer goes back, never forward
                    assert order.index(page[reference.get("data-ref")]) < order.index(reference)


def test_a_part_sent_again_points_back_to_where_it_was_shown_in_full():
    calls = {call.get("id"): call for call in calls_of(fragment(RECORDING))}
    system = own(calls["hood-v3-1"], "hood-system")
    assert classes(system) == {"hood-part", "hood-system", "hood-new"}
    assert system.find("summary").text == "system · 1,200 characters · new"
    assert "hood-text" in classes(system.find("pre")) and code_text(system) == SYSTEM
    tools = own(calls["hood-v3-1"], "hood-tools")
    assert tools.find("summary").text == "tools: bash, Task · new"
    assert json.loads(code_text(tools)) == TOOLS
    again = own(calls["hood-v3-3"], "hood-system")
    assert classes(again) == {"hood-ref", "hood-system"}
    assert again.get("data-ref") == "hood-v3-1-system"
    assert again.text == "system: " and again.find("a").text == "unchanged since Call 1"
    assert again.find("a").get("href") == "#hood-v3-1-system"
    sub_tools = own(calls["hood-v3-A1"], "hood-tools")  # another list of tools: shown in full
    assert sub_tools.find("summary").text == "tools: bash · new"
    messages = list(own(calls["hood-v3-3"], "hood-messages"))
    assert [item.get("data-ref") for item in messages] == [
        "hood-v3-1-m0", "hood-v3-1-reply", "hood-v3-2-m2"]
    assert [item.find("a").text for item in messages] == [
        "unchanged since Call 1", "the reply to Call 1", "unchanged since Call 2"]
    assert messages[1].text == "[1] assistant: "
    assert messages[1].find("a").tail == (
        " · thinking: Two things to look at. · Two subagents will look. · tool_use Task · "
        "tool_use Task")
    other = own(calls["hood-v3-1"], "hood-other")
    assert other.find("summary").text == "the other fields"
    assert other.find("pre").get("class") == "hood-json"  # styled as JSON (hood.css)
    assert json.loads(code_text(other)) == {"model": "claude-sonnet-5-5", "max_tokens": 1000}


def test_only_what_a_round_adds_is_marked_new():
    calls = {call.get("id"): call for call in calls_of(fragment(RECORDING))}
    marked = {
        ident: [item.find("details").get("id") for item in own(call, "hood-messages")
                if "hood-new" in classes(item)]
        for ident, call in calls.items()
    }
    assert marked == {
        "hood-v3-1": ["hood-v3-1-m0"], "hood-v3-A1": ["hood-v3-A1-m0"],
        "hood-v3-B1": ["hood-v3-B1-m0"], "hood-v3-B2": ["hood-v3-B2-m2"],
        "hood-v3-2": ["hood-v3-2-m2"], "hood-v3-3": [],
    }
    new = next(item for item in own(calls["hood-v3-2"], "hood-messages")
               if "hood-new" in classes(item))
    details = new.find("details")
    assert details.get("open") == "open"
    summary = details.find("summary")
    assert summary.text == "[2] user · " and summary.find("span").text == "new"
    assert summary.find("span").tail == (
        " · tool_result: test_total fails · tool_result: total() ignores the discount")
    assert json.loads(code_text(details)) == AFTER_REPORTS[2]


def test_a_reply_shows_its_content_stop_reason_and_usage_or_the_error_body():
    calls = {call.get("id"): call for call in calls_of(fragment(RECORDING, "ja"))}
    first = next(child for child in calls["hood-v3-1"] if "hood-reply" in classes(child))
    label = first.find("p")
    assert label.get("class") == "hood-label"
    assert label.text == (
        "応答 · stop_reason tool_use · トークン: 入力 1,234、出力 56、キャッシュ書き込み 1,000、"
        "キャッシュ読み込み 0")
    assert first.find("pre").get("id") == "hood-v3-1-reply"
    shown = json.loads(code_text(first))
    assert shown == {"content": FIRST_REPLY, "stop_reason": "tool_use",
                     "usage": RECORDING[0]["reply"]["body"]["usage"]}
    failed = next(child for child in calls["hood-v3-2"] if "hood-reply" in classes(child))
    assert failed.find("p").text == "応答 · HTTP 529"
    assert json.loads(code_text(failed)) == RECORDING[4]["reply"]["body"]
    request = next(child for child in calls["hood-v3-1"] if "hood-request" in classes(child))
    assert request.find("p").text == "リクエスト"


# -- subagents --


@pytest.mark.parametrize("language", ["en", "ja"])
def test_each_subagent_sits_under_the_task_call_that_started_it(language):
    section = fragment(RECORDING, language)
    assert shown_nesting(section) == {"toolu_find": [3], "toolu_read": [2, 4]}
    readable = [  # test_hood.py's check reads every main reply's content; an error has none
        {**exchange, "reply": {"status": 200, "body": {"content": []}}}
        if exchange["reply"]["status"] != 200 else exchange
        for exchange in RECORDING
    ]
    assert nesting_problems(shown_nesting(section), "v3", readable) == []
    first = calls_of(section)[0]
    [group] = [child for child in first if "hood-subagents" in classes(child)]
    assert group.find("p").text == LABELS[language]["subagents"]
    subagents = [child for child in group if child.tag == "details"]
    titles = [subagent.find("summary").text for subagent in subagents]
    line = LABELS[language]["subagent"]
    count = LABELS[language]["subagent_calls"]
    assert titles == [
        line.format(letter="A", agent_type="explore", description="find the test") + " · "
        + count.format(count=1),
        line.format(letter="B", agent_type="explore", description="read the cart") + " · "
        + count.format(count=2),
    ]
    assert [subagent.get("data-task") for subagent in subagents] == ["toolu_find", "toolu_read"]
    assert not [child for call in calls_of(section)[1:] for child in call
                if "hood-subagents" in classes(child)]


def test_a_task_that_started_nothing_takes_no_letter_and_a_stray_request_stops_the_build():
    unstarted = task("toolu_none", "never ran", "Nobody sent this")
    recording = [dict(exchange) for exchange in RECORDING]
    body = reply([unstarted, *FIRST_REPLY[2:]], "tool_use")
    recording[0] = {**recording[0], "reply": {"status": 200, "body": body}}
    main = call_tree(recording)
    assert [(subagent.letter, subagent.task["id"]) for subagent in main[0].subagents] == [
        ("A", "toolu_find"), ("B", "toolu_read")]
    assert [call.label for call in main[0].subagents[1].calls] == ["B1", "B2"]
    stray = record("Nobody asked for this", [{"role": "user", "content": "Nobody asked"}],
                   reply([text("?")]))
    with pytest.raises(ValueError, match=r"no Task call started: \['Nobody asked'\]"):
        call_tree(RECORDING + [stray])


def test_a_task_that_names_no_agent_type_shows_a_question_mark():
    untyped = {**FIRST_REPLY[2], "input": {"description": "find the test", "prompt": FIND}}
    body = reply([untyped], "tool_use")
    recording = [{**RECORDING[0], "reply": {"status": 200, "body": body}}, RECORDING[2]]
    section = fragment(recording)
    [subagent] = [element for element in section.iter("details")
                  if "hood-subagent" in classes(element)]
    assert subagent.find("summary").text == (
        "Subagent A (?): find the test · 1 model calls on a history of its own")


def test_the_summary_counts_the_main_agents_and_the_subagents_calls():
    assert summary_line(fragment(RECORDING)) == (
        f"6 model calls: 3 by the main agent, 3 by 2 subagents. The main agent's request grows "
        f"from {SIZES[0]:,} to {SIZES[5]:,} bytes; the largest request of a subagent is "
        f"{max(SIZES[1:4]):,} bytes.")
    assert summary_line(fragment(RECORDING, "ja")) == LABELS["ja"]["summary_subagents"].format(
        calls=6, main=3, count=3, agents=2, first=SIZES[0], last=SIZES[5],
        largest=max(SIZES[1:4]))


def test_a_run_without_subagents_says_only_how_its_request_grows():
    main_only = [RECORDING[0], RECORDING[5]]
    assert summary_line(fragment(main_only)) == (
        f"2 model calls. The request grows from {SIZES[0]:,} to {SIZES[5]:,} bytes.")


# -- the chart and the two parts --


def chart_bars(section: ET.Element) -> list[tuple[str, str, str]]:
    """(label, value, kind) of each bar of the section's chart, in its wide drawing."""
    svg = section.find("figure").find(f"{SVG}svg")
    shapes = [shape for shape in svg if shape.tag in (f"{SVG}text", f"{SVG}rect")]
    return [
        (shapes[index - 1].text, shapes[index + 1].text, shape.get("class").removeprefix("bar-"))
        for index, shape in enumerate(shapes)
        if shape.tag == f"{SVG}rect"
    ]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_chart_has_a_bar_per_call_in_page_order_a_subagents_in_its_own_colour(language):
    section = fragment(RECORDING, language)
    text = LABELS[language]
    assert chart_bars(section) == [
        (text["call"].format(label), text["bytes"].format(SIZES[number - 1]),
         "main" if RECORDING[number - 1]["track"] == "default" else "sub")
        for number, label in SHOWN
    ]
    figure = section.find("figure")
    svg = figure.find(f"{SVG}svg")
    assert svg.find(f"{SVG}title").get("id") == "hood-v3-chart-t"
    assert svg.find(f"{SVG}title").text == text["chart_title"].format(version="v3")
    assert svg.find(f"{SVG}desc").text == text["chart_desc"]
    narrow = figure.findall(f"{SVG}svg")[1]
    pair = "{}: {}" if language == "en" else "{}：{}"
    first_line = next(shape for shape in narrow if shape.tag == f"{SVG}text")
    assert first_line.text == pair.format(text["call"].format("1"), text["bytes"].format(SIZES[0]))
    # the figure comes after the summary and before the first call
    children = list(section)
    assert [child.tag for child in children[:3]] == ["p", "p", "figure"]
    assert children[0].get("class") == "hood-source" and children[0].text == text["scripted"]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_split_run_shows_the_first_calls_then_the_chart_and_the_rest(language):
    first = fragment(RECORDING, language, "first")
    rest = fragment(RECORDING, language, "rest")
    assert (first.get("data-part"), rest.get("data-part")) == ("first", "rest")
    assert first.get("data-calls") == rest.get("data-calls") == "6"
    assert fragment(RECORDING, language).get("data-part") is None
    # the main agent's first FIRST_CALLS calls, with the subagents of the first
    assert [call.get("id") for call in calls_of(first)] == [
        f"hood-v3-{label}" for _, label in SHOWN[: 4 + FIRST_CALLS - 1]]
    assert [call.get("id") for call in calls_of(rest)] == ["hood-v3-3"]
    assert first.find("figure") is None and len(rest.findall("figure")) == 1
    assert len(chart_bars(rest)) == 6  # the chart is of the whole run
    assert summary_line(first) == LABELS[language]["summary_first"].format(
        shown=5, calls=6, first=SIZES[0], last=SIZES[4])
    assert summary_line(rest) == summary_line(fragment(RECORDING, language))
    assert next(p for p in first.iter("p") if "hood-source" in classes(p)).text == (
        LABELS[language]["scripted"])


# -- a compacted run (v5) --

QUESTION = "Summarise the conversation so far."
COMPACTED = [
    record("default", [{"role": "user", "content": TASK}],
           reply([text("Looking.")], "tool_use")),
    record("default", [{"role": "user", "content": TASK},
                       {"role": "assistant", "content": [text("Looking.")]},
                       {"role": "user", "content": "x" * 3000}],
           reply([text("More.")])),
    record("default", [{"role": "user", "content": TASK},
                       {"role": "assistant", "content": [text("Looking.")]},
                       {"role": "user", "content": "x" * 3000},
                       {"role": "assistant", "content": [text("More.")]},
                       {"role": "user", "content": QUESTION}],
           reply([text("The summary.")])),
    record("default", [{"role": "user", "content": "The summary. " + TASK}],
           reply([text("Done.")])),
]
COMPACTED_SIZES = [exchange["size"] for exchange in COMPACTED]


def test_the_request_that_asked_for_a_summary_is_the_one_before_a_fresh_history():
    main = call_tree(COMPACTED)
    assert [call.label for call in summary_requests(main)] == ["3"]
    assert summary_requests(main[:3]) == []  # no fresh history after it: not known yet
    assert summary_requests(call_tree(RECORDING)) == []  # a subagent's first request is not one


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_compacted_run_says_where_its_request_drops_and_marks_the_summary_bar(language):
    section = fragment(COMPACTED, language, version="v5")
    text = LABELS[language]
    assert summary_line(section) == text["summary_compacted"].format(
        calls=4, first=COMPACTED_SIZES[0], peak=COMPACTED_SIZES[2], summary="3",
        after=COMPACTED_SIZES[3])
    assert COMPACTED_SIZES[3] < COMPACTED_SIZES[2] and COMPACTED_SIZES[0] < COMPACTED_SIZES[1]
    assert [(label, kind) for label, _, kind in chart_bars(section)] == [
        (text["call"].format(1), "main"), (text["call"].format(2), "main"),
        (text["summary_call"].format(text["call"].format(3)), "summary"),
        (text["call"].format(4), "main")]
    svg = section.find("figure").find(f"{SVG}svg")
    assert svg.find(f"{SVG}desc").text == text["chart_desc_compacted"]
    assert summary_line(fragment(COMPACTED[:2], language, version="v5")) == text[
        "summary"].format(calls=2, first=COMPACTED_SIZES[0], last=COMPACTED_SIZES[1])


# -- one line per message --


def test_a_messages_line_names_each_block_and_clips_long_text():
    long = "word " * 20  # 100 characters, spaces collapsed: cut to 63 and an ellipsis
    assert gist({"role": "user", "content": "  two\n  lines  "}) == "two lines"
    assert gist({"role": "user", "content": long}) == ("word " * 13)[:63] + "…"
    assert gist({"role": "user", "content": "a" * 64}) == "a" * 64
    assert gist({"role": "user", "content": "a" * 65}) == "a" * 63 + "…"
    content = [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "redacted_thinking", "data": "..."},
        {"type": "tool_use", "id": "t", "name": "read_file", "input": {}},
        {"type": "tool_result", "tool_use_id": "t", "content": [text("the file")]},
        {"type": "tool_result", "tool_use_id": "u"},
        {"type": "thinking", "signature": "s"},
    ]
    assert gist({"role": "user", "content": content}) == (
        "thinking: hmm · redacted_thinking · tool_use read_file · tool_result: the file · "
        "tool_result:  · thinking: ")


def test_the_tokens_of_a_reply_show_cache_figures_counted_even_when_only_one_is():
    usage = {"input_tokens": 5, "output_tokens": 6, "cache_read_input_tokens": 7}
    call = Call(1, "default", 10, {}, {"status": 200, "body": {"stop_reason": "max_tokens",
                                                              "usage": usage}})
    assert Page("v1", "en").reply_facts(call) == [
        "stop_reason max_tokens", "tokens: in 5, out 6, cache write 0, cache read 7"]
    usage = {"input_tokens": 5, "output_tokens": 6, "cache_creation_input_tokens": 8}
    call.reply["body"]["usage"] = usage
    assert Page("v1", "en").reply_facts(call)[1] == (
        "tokens: in 5, out 6, cache write 8, cache read 0")


# -- where the requests were answered --


def test_the_source_line_says_who_answered():
    scripted = {"upstream": "scripted model (v1_demo.yaml)", "model": "m", "date": "d"}
    claude = {"upstream": "https://api.anthropic.com", "model": "claude-x", "date": "2026-01-02"}
    other = {"upstream": "http://localhost:4000", "model": "llama", "date": "2026-01-03"}
    assert source_label(None, "en") == source_label(scripted, "en") == LABELS["en"]["scripted"]
    assert source_label(claude, "en") == "Recorded from claude-x on 2026-01-02."
    assert source_label(other, "en") == (
        "Recorded from llama at http://localhost:4000 on 2026-01-03.")
    assert source_label(other, "ja") == (
        "2026-01-03 に http://localhost:4000 の llama とのやり取りを記録したものです。")


def session_lines(exchanges: list[tuple[dict | None, dict]]) -> list[dict]:
    """A file of python -m scripted.record: a header, then each exchange's request and reply."""
    lines = [{"kind": "header", "format": 1, "upstream": "https://api.anthropic.com",
              "model": "claude-x", "date": "2026-01-02"}]
    for number, (body, answer) in enumerate(exchanges, 1):
        raw = json.dumps(body, ensure_ascii=False)
        lines.append({"kind": "request", "exchange": number, "at": 0.0, "method": "POST",
                      "path": "/v1/messages", "size": len(raw.encode("utf-8")), "headers": {},
                      "body": body})
        lines.append({"kind": "reply", "exchange": number, "at": 0.1, "status": 200,
                      "headers": {}})
        lines.append({"kind": "body", "exchange": number, "data": answer})
    return lines


def test_a_recorded_session_becomes_the_pages_records_its_subagents_known_by_their_prompt(
        tmp_path):
    main_body = {"messages": [{"role": "user", "content": "Fix it, ü"}]}
    sub_body = {"messages": [{"role": "user", "content": [text(FIND)]}]}
    unknown = {"messages": [{"role": "user", "content": "Not a prompt of any Task"}]}
    started = reply([task("toolu_find", "find", FIND)], "tool_use")
    exchanges = [(None, {"data": []}), (main_body, started), (sub_body, reply([text("ok")])),
                 (unknown, reply([text("ok")]))]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in session_lines(exchanges)),
                    encoding="utf-8")
    records, header = from_session(path)
    assert header["model"] == "claude-x"
    assert [entry["track"] for entry in records] == ["default", FIND, "default"]
    assert records[0]["raw"] == json.dumps(main_body, ensure_ascii=False)
    assert records[0]["size"] == len(records[0]["raw"].encode("utf-8"))
    assert records[0]["reply"] == {"status": 200, "body": started}
    assert [call.label for call in call_tree(records)] == ["1", "2"]


def test_the_demos_random_folder_is_masked_to_the_same_length(tmp_path):
    folder = "/tmp/agent-demo-v1-k2j4h7sd"
    path = tmp_path / "v1.json"
    recording = [record("default", [{"role": "user", "content": f"cd {folder}; ls {folder}"}],
                        reply([text("ok")]))]
    path.write_text(json.dumps(recording), encoding="utf-8")
    hide_folder(path, folder)
    [masked] = load_recording(path)
    assert "cd /tmp/agent-demo-v1-xxxxxxxx; ls /tmp/agent-demo-v1-xxxxxxxx" in masked["raw"]
    assert folder not in masked["raw"]
    assert len(masked["raw"]) == len(recording[0]["raw"])
    assert {key: value for key, value in masked.items() if key != "raw"} == {
        key: value for key, value in recording[0].items() if key != "raw"}


# -- what the page shows, character by character --

BLOCKS = {"section", "p", "details", "summary", "div", "ol", "li", "pre", "figure"}


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("part", ["", "first", "rest"])
def test_the_page_holds_no_stray_text_between_its_parts(language, part):
    section = fragment(RECORDING, language, part)
    assert (section.text or "").strip() == ""
    stray = [(element.tag, element.get("id"), element.tail) for element in section.iter()
             if element.tag in BLOCKS and (element.tail or "").strip()]
    assert stray == []


def test_every_part_of_a_call_has_an_anchor_named_after_it_and_no_block_an_empty_one():
    section = fragment(RECORDING)
    ids = [element.get("id") for element in section.iter() if element.get("id") is not None]
    assert "" not in ids
    for label in ("1", "A1", "B1", "B2", "2", "3"):
        assert {f"hood-v3-{label}-other", f"hood-v3-{label}-reply"} <= set(ids)
    assert {"hood-v3-1-m0", "hood-v3-A1-m0", "hood-v3-B1-m0"} <= set(ids)
    other = section.find(".//details[@id='hood-v3-1-other']")
    assert json.loads(code_text(other)) == {"model": "claude-sonnet-5-5", "max_tokens": 1000}


JAPANESE = [record("default", [{"role": "user", "content": "カートの合計を直して"}],
                   reply([text("直しました。")]))]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_message_and_a_reply_read_as_json_indented_by_two_with_japanese_as_written(language):
    call = calls_of(fragment(JAPANESE, language))[0]
    message = call.find(".//details[@id='hood-v3-1-m0']")
    assert code_text(message) == (
        '{\n  "role": "user",\n  "content": "カートの合計を直して"\n}')
    answer = code_text(call.find(".//pre[@id='hood-v3-1-reply']"))
    assert answer == json.dumps(JAPANESE[0]["reply"]["body"], indent=2, ensure_ascii=False)
    assert '"text": "直しました。"' in answer


# The SDK sends the reply back with each object's keys in its own order, not the server's.
ECHOED = [
    record("default", [{"role": "user", "content": TASK}],
           reply([text("Looking.")], "tool_use")),
    record("default", [{"role": "user", "content": TASK},
                       {"content": [{"text": "Looking.", "type": "text"}], "role": "assistant"},
                       {"role": "user", "content": "go on"}], reply([text("Done.")])),
]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_reply_sent_back_with_its_keys_in_another_order_points_back_to_it(language):
    calls = calls_of(fragment(ECHOED, language))
    assert LABELS[language]["messages"].format(count=3, new=1) in facts(calls[1])[1].split(" · ")
    sent_back = calls[1].find(".//ol").findall("li")[1]
    assert "hood-ref" in classes(sent_back)
    assert sent_back.get("data-ref") == "hood-v3-1-reply"
    assert sent_back.find("a").text == LABELS[language]["reply_to"].format(
        LABELS[language]["call"].format("1"))


RETRIED = [
    record("default", [{"role": "user", "content": TASK}],
           {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
           status=529),
    record("default", [{"role": "user", "content": TASK}], reply([text("Fixed.")])),
]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_first_request_sent_again_after_an_error_is_no_summary_request(language):
    section = fragment(RETRIED, language)
    size = RETRIED[0]["size"]
    assert summary_line(section) == LABELS[language]["summary"].format(
        calls=2, first=size, last=size)
    assert summary_requests(call_tree(RETRIED)) == []


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_request_without_a_system_prompt_or_tools_shows_them_empty(language):
    words = LABELS[language]
    call = calls_of(fragment([record("default", [{"role": "user", "content": "hi"}],
                                     reply([text("hello")]), system=None, tools=None)],
                             language))[0]
    system = own(call, "hood-system")
    assert system.find("summary").text == " · ".join(
        [words["system"], words["characters"].format(0), words["new"]])
    assert "hood-text" in classes(system.find("pre")) and code_text(system) == ""
    tools = own(call, "hood-tools")
    assert tools.find("summary").text == f"{words['tools']}:  · {words['new']}"
    assert code_text(tools) == "[]"


def test_a_tool_other_than_task_with_the_same_prompt_starts_no_subagent():
    fetch = {"type": "tool_use", "id": "toolu_fetch", "name": "WebFetch",
             "input": {"url": "https://example.com", "prompt": FIND}}
    recording = [
        record("default", [{"role": "user", "content": TASK}],
               reply([fetch, task("toolu_find", "find the test", FIND)], "tool_use")),
        record(FIND, [{"role": "user", "content": FIND}], reply([text("found")]),
               system=SUB_SYSTEM, tools=TOOLS[:1]),
    ]
    [subagent] = [element for element in fragment(recording).iter("details")
                  if "hood-subagent" in classes(element)]
    assert subagent.get("data-task") == "toolu_find"
    assert subagent.find("summary").text.startswith("Subagent A (explore): find the test · ")
