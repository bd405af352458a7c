"""Under the hood: each chapter shows every request its demo sent, as the scripted server got it.

The checks read the built site (the build shared by the whole run, tests/site.py) and the
recordings the same build made of the demos (.generated/hood/records/), and compare the two: every
call is there, with the size the server measured; each request can be put back together from the
page, byte for byte the JSON that was sent; a subagent's calls sit under the `Task` call that
started them. The "What changed" cards and the charts are checked against counts made here another
way. Nothing here runs a demo again.
"""

import functools
import itertools
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import anthropic
import pytest

from docsgen.charts import GISTDEX
from docsgen.hood import FIRST_CALLS, Call, Page, hood_files
from docsgen.numbers import PLACEHOLDER, constant
from scripted import ROOT, SCRIPTS
from scripted.demo import recording
from scripted.rules import plain_text
from tests.test_docs import code_blocks, html_of

GENERATED = ROOT / ".generated"
VERSIONS = [version for version, script in SCRIPTS.items() if (ROOT / script).exists()]
LANGUAGES = ["en", "ja"]
PAIRS = list(zip(VERSIONS, VERSIONS[1:], strict=False))
MAIN = "default"


# -- reading the built pages --------------------------------------------------------------------


def element_at(html: str, opening: str) -> ET.Element:
    """The element that starts with `opening` on a built page, parsed. The generated parts are
    well-formed XML, and Markdown passes them through untouched, so they still are."""
    start = html.index(opening)
    tag = opening[1:].split()[0]
    depth, position = 0, start
    for match in re.finditer(rf"<{tag}[\s>]|</{tag}>", html[start:]):
        depth += -1 if match[0].startswith("</") else 1
        if depth == 0:
            position = start + match.end()
            break
    return ET.fromstring(html[start:position])


def hood_parts(site: Path, language: str, version: str) -> list[ET.Element]:
    """Each <section class="hood"> of a chapter, in page order: one, or the run split in two (v1
    shows its first calls early and the others further down)."""
    html = html_of(site, language, f"{version}.md")
    opening = '<section class="hood"'
    return [element_at(html[at:], opening) for at in find_all(html, opening)]


def find_all(text: str, part: str) -> list[int]:
    return [match.start() for match in re.finditer(re.escape(part), text)]


@functools.cache  # read once per run: many tests look at the same page (none changes it)
def hood(site: Path, language: str, version: str) -> ET.Element:
    """A chapter's "Under the hood" as one element, its parts joined in page order."""
    parts = hood_parts(site, language, version)
    whole = ET.Element("section", parts[0].attrib)
    for part in parts:
        assert part.get("data-calls") == parts[0].get("data-calls")
        whole.extend(list(part))
    return whole


def classes(element: ET.Element) -> set[str]:
    return set(element.get("class", "").split())


def calls_of(parent: ET.Element) -> list[ET.Element]:
    return [element for element in parent.iter("details") if "hood-call" in classes(element)]


def own(call: ET.Element, kind: str) -> ET.Element:
    """The part of a call's request with this class (hood-system, hood-tools, ...)."""
    request = next(child for child in call if "hood-request" in classes(child))
    return next(child for child in request if kind in classes(child))


def code_text(element: ET.Element) -> str:
    """The text of the code block in an element (or the element's own, if it is a <pre>)."""
    pre = element if element.tag == "pre" else element.find(".//pre")
    return pre.find("code").text or ""


@functools.cache
def records(version: str) -> list[dict]:
    return json.loads((GENERATED / "hood" / "records" / f"{version}.json").read_text("utf-8"))


@functools.cache
def bodies(version: str) -> list[dict]:
    return [json.loads(record["raw"]) for record in records(version)]


# -- the recording -----------------------------------------------------------------------------


def test_the_demo_records_each_request_as_the_server_got_it_and_the_reply(scripted_api):
    """`python -m scripted.demo vN --record F` writes recording(api): the raw body and its size,
    the track that answered, and the reply."""
    scripted_api.play({"turns": [{"text": "hello"}]})
    body = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi ü"}],
    }
    anthropic.Anthropic().messages.create(**body)
    [saved] = recording(scripted_api)
    assert saved["size"] == len(saved["raw"].encode("utf-8")) == scripted_api.requests[0].size
    assert json.loads(saved["raw"]) == body
    assert saved["track"] == MAIN
    assert saved["reply"]["status"] == 200
    assert saved["reply"]["body"]["content"] == [{"type": "text", "text": "hello"}]


@pytest.mark.parametrize(
    ("usage", "en", "ja"),
    [
        (  # Claude with nothing cached counts 0
            {
                "input_tokens": 1200,
                "output_tokens": 9,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
            "tokens: in 1,200, out 9, cache write 0, cache read 0",
            "トークン: 入力 1,200、出力 9、キャッシュ書き込み 0、キャッシュ読み込み 0",
        ),
        (  # Ollama's usage has no cache fields: no cache figures, rather than a claimed 0
            {"input_tokens": 1200, "output_tokens": 9},
            "tokens: in 1,200, out 9",
            "トークン: 入力 1,200、出力 9",
        ),
    ],
)
def test_a_replys_tokens_show_the_cache_figures_only_where_the_usage_has_them(usage, en, ja):
    message = {"stop_reason": "end_turn", "usage": usage}
    call = Call(1, MAIN, 10, {}, {"status": 200, "body": message})
    assert Page("v1", "en").reply_facts(call) == ["stop_reason end_turn", en]
    assert Page("v1", "ja").reply_facts(call) == ["stop_reason end_turn", ja]


# -- every call, with its size ------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("version", VERSIONS)
def test_every_model_call_of_the_demo_is_shown_with_the_size_the_server_measured(
    built_site, version, language
):
    recorded = records(version)
    fragment = hood(built_site, language, version)
    shown = calls_of(fragment)
    assert int(fragment.get("data-calls")) == len(recorded)
    assert sorted(int(call.get("data-request")) for call in shown) == list(
        range(1, len(recorded) + 1)
    )
    for call in shown:
        record = recorded[int(call.get("data-request")) - 1]
        assert int(call.get("data-size")) == record["size"] == len(record["raw"].encode("utf-8"))
        assert call.get("data-track") == record["track"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_v1_shows_its_first_two_calls_early_and_the_others_with_the_chart_further_down(
    built_site, language
):
    """The v1 chapter splits its run: the main agent's first FIRST_CALLS calls right after the
    transcript, the chart and every other call after the code (their pointers reach back)."""
    first, rest = hood_parts(built_site, language, "v1")
    assert (first.get("data-part"), rest.get("data-part")) == ("first", "rest")
    assert [int(call.get("data-request")) for call in calls_of(first)] == list(
        range(1, FIRST_CALLS + 1)
    )
    assert [int(call.get("data-request")) for call in calls_of(rest)] == list(
        range(FIRST_CALLS + 1, len(records("v1")) + 1)
    )
    assert not first.findall("figure") and len(rest.findall("figure")) == 1
    shown = f"{FIRST_CALLS} of {len(records('v1'))}" if language == "en" else f"{FIRST_CALLS} 回"
    summary = next(p for p in first.iter("p") if "hood-summary" in classes(p))
    assert shown in summary.text


@pytest.mark.usefixtures("built_site")  # .generated/ holds this run's build
@pytest.mark.parametrize("version", VERSIONS)
def test_the_recording_is_of_the_run_the_transcript_shows(version):
    """The transcript's token lines are the main agent's calls: as many, with the same counts."""
    transcript = (GENERATED / "transcripts" / f"{version}.txt").read_text(encoding="utf-8")
    printed = re.findall(r"^  \[tokens: in ([\d,]+), out ([\d,]+)", transcript, re.M)
    replies = [record["reply"]["body"] for record in records(version) if record["track"] == MAIN]
    assert [(int(i.replace(",", "")), int(o.replace(",", ""))) for i, o in printed] == [
        (reply["usage"]["input_tokens"], reply["usage"]["output_tokens"]) for reply in replies
    ]


# -- each request, rebuilt from the page ---------------------------------------------------------


def part_value(element: ET.Element, page: dict[str, ET.Element]) -> object:
    """What a shown part stands for: its own JSON (or text), or that of the part it points to."""
    if "hood-ref" in classes(element):
        target = page[element.get("data-ref")]
        assert element.find("a").get("href") == "#" + element.get("data-ref")
        if target.tag == "pre":  # a reply, sent back as the assistant's message
            return {"role": "assistant", "content": json.loads(code_text(target))["content"]}
        return part_value(target, page)
    if element.tag == "li":
        element = element.find("details")
    pre = element if element.tag == "pre" else element.find("pre")
    text = code_text(pre)
    return text if "hood-text" in classes(pre) else json.loads(text)


def rebuilt_request(call: ET.Element, page: dict[str, ET.Element]) -> dict:
    return {
        "system": part_value(own(call, "hood-system"), page),
        "tools": part_value(own(call, "hood-tools"), page),
        "messages": [part_value(item, page) for item in own(call, "hood-messages")],
        **part_value(own(call, "hood-other"), page),
    }


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("version", VERSIONS)
def test_each_request_can_be_put_back_together_from_the_page_exactly_as_sent(
    built_site, version, language
):
    """What the page shows once and then points back to adds up to each request, in full."""
    fragment = hood(built_site, language, version)
    order = list(fragment.iter())
    page = {element.get("id"): element for element in order if element.get("id")}
    sent = bodies(version)
    for call in calls_of(fragment):
        request = rebuilt_request(call, page)
        assert request == sent[int(call.get("data-request")) - 1], call.get("id")
        for reference in call.iter():
            if "hood-ref" in classes(reference):  # a pointer goes back, never forward
                assert order.index(page[reference.get("data-ref")]) < order.index(reference)


@pytest.mark.parametrize("version", VERSIONS)
def test_what_a_round_adds_is_marked_new_and_nothing_else(built_site, version):
    """After the first call of a conversation, a round adds the previous reply (shown as that
    reply) and new user content: only the messages after those two are marked new."""
    sent = bodies(version)
    tracks = [record["track"] for record in records(version)]
    for call in calls_of(hood(built_site, "en", version)):
        number = int(call.get("data-request"))
        messages = sent[number - 1]["messages"]
        earlier = [
            body
            for body, track in zip(sent[: number - 1], tracks, strict=False)
            if track == tracks[number - 1] and body["messages"][0] == messages[0]
        ]
        expected = len(messages) - len(earlier[-1]["messages"]) - 1 if earlier else len(messages)
        marked = [item for item in own(call, "hood-messages") if "hood-new" in classes(item)]
        assert len(marked) == expected, call.get("id")
        assert [int(item.find("details").get("id").rsplit("-m", 1)[1]) for item in marked] == list(
            range(len(messages) - expected, len(messages))
        )


# -- subagents ----------------------------------------------------------------------------------


def first_prompt(body: dict) -> str:
    return plain_text(body["messages"][0]["content"])


def nesting_problems(
    nesting: dict[str, list[int]], version: str, recorded: list[dict] | None = None
) -> list[str]:
    """What is wrong with a nesting of subagent requests under Task calls (by tool_use id): every
    subagent request must sit under exactly one Task, the one whose prompt it was started with, on
    one track, and no main-agent request may sit under any. `recorded`: another recording than
    the build's (the same requests in another order)."""
    recorded = records(version) if recorded is None else recorded
    sent = [json.loads(record["raw"]) for record in recorded]
    tasks = {
        block["id"]: block["input"]
        for record in recorded
        if record["track"] == MAIN
        for block in record["reply"]["body"]["content"]
        if block["type"] == "tool_use" and block["name"] == "Task"
    }
    problems = []
    nested = [number for numbers in nesting.values() for number in numbers]
    children = [number for number, record in enumerate(recorded, 1) if record["track"] != MAIN]
    if sorted(nested) != children:
        problems.append(f"nested {sorted(nested)}, but the subagents' requests are {children}")
    for task_id, numbers in nesting.items():
        for number in numbers:
            if first_prompt(sent[number - 1]) != tasks[task_id]["prompt"]:
                problems.append(f"request {number} was not started by Task {task_id}")
        if len({recorded[number - 1]["track"] for number in numbers}) > 1:
            problems.append(f"Task {task_id} holds requests of several tracks")
    return problems


def shown_nesting(fragment: ET.Element) -> dict[str, list[int]]:
    return {
        subagent.get("data-task"): [int(call.get("data-request")) for call in calls_of(subagent)]
        for subagent in fragment.iter("details")
        if "hood-subagent" in classes(subagent)
    }


def nesting_by_order(recorded: list[dict]) -> dict[str, list[int]]:
    """The realistic mistake: go by the order the requests arrived in. A request with a single
    message starts the subagent of the next Task call, and the requests after it are its own."""
    nesting, pending, current = {}, [], None
    sent = [json.loads(record["raw"]) for record in recorded]
    for number, (record, body) in enumerate(zip(recorded, sent, strict=True), 1):
        if record["track"] == MAIN:
            content = record["reply"]["body"]["content"]
            pending = [block["id"] for block in content if block.get("name") == "Task"]
            continue
        if len(body["messages"]) == 1 and pending:
            current = pending.pop(0)
            nesting[current] = []
        nesting[current].append(number)
    return nesting


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_subagents_calls_sit_under_the_task_call_that_started_it(built_site, language):
    fragment = hood(built_site, language, "v3")
    nesting = shown_nesting(fragment)
    assert len(nesting) == 4  # the v3 demo: two explorers at once, then a planner, then a coder
    assert nesting_problems(nesting, "v3") == []
    top_level = [call for call in fragment if "hood-call" in classes(call)]
    for subagent in fragment.iter("details"):  # ...and the Task is in the reply of the call above
        if "hood-subagent" in classes(subagent):
            parent = next(call for call in top_level if subagent in call.iter())
            reply = next(child for child in parent if "hood-reply" in classes(child))
            assert subagent.get("data-task") in code_text(reply)
    assert {call.get("data-track") for call in top_level} == {MAIN}


@pytest.mark.usefixtures("built_site")  # .generated/ holds this run's build
@pytest.mark.usefixtures("built_site")  # .generated/ holds this run's build
def test_nesting_by_arrival_order_instead_of_by_track_is_caught():
    """The explorers of the v3 demo run at the same time, so their requests can arrive
    interleaved. The build records them grouped by subagent, in the model's order (docsgen/
    generated.py's in_model_order()), so two builds agree; here they are interleaved on purpose,
    as a recorded session may hold them. The fragment still puts each request under the Task that
    started it; a nesting that trusts the order puts requests under the wrong Task, and the check
    above says so."""
    recorded = records("v3")
    tracks = list(dict.fromkeys(record["track"] for record in recorded if record["track"] != MAIN))
    first, second = ([record for record in recorded if record["track"] == track]
                     for track in tracks[:2])
    start = recorded.index(first[0])
    alternating = [record for pair in itertools.zip_longest(second, first) for record in pair
                   if record is not None]
    interleaved = recorded[:start] + alternating + recorded[start + len(alternating):]
    assert sorted(map(id, interleaved)) == sorted(map(id, recorded)) and interleaved != recorded
    assert nesting_problems(nesting_by_order(interleaved), "v3", interleaved) != []
    fragment = hood_files({"v3": interleaved})[Path("hood", "en", "v3.html")]
    section = element_at(fragment, '<section class="hood"')
    assert nesting_problems(shown_nesting(section), "v3", interleaved) == []


@pytest.mark.usefixtures("built_site")  # .generated/ holds this run's build
def test_the_main_agent_gets_the_reports_and_nothing_the_subagents_read():
    recorded, sent = records("v3"), bodies("v3")
    main = [number for number, record in enumerate(recorded, 1) if record["track"] == MAIN]
    reports = {}  # the last reply of each subagent, by the prompt it was given
    for number, record in enumerate(recorded, 1):
        if record["track"] != MAIN:
            reports[first_prompt(sent[number - 1])] = plain_text(record["reply"]["body"]["content"])
    read_by_subagents = [
        plain_text(block.get("content", ""))
        for number, body in enumerate(sent, 1)
        if number not in main
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    second = sent[main[1] - 1]
    first_reply = recorded[main[0] - 1]["reply"]["body"]["content"]
    tasks = [block for block in first_reply if block.get("name") == "Task"]
    results = {
        block["tool_use_id"]: block["content"] for block in second["messages"][-1]["content"]
    }
    assert results == {task["id"]: reports[task["input"]["prompt"]] for task in tasks}
    assert read_by_subagents and not any(text in json.dumps(second) for text in read_by_subagents)


# -- skills (v4) --------------------------------------------------------------------------------


@pytest.mark.skipif("v4" not in VERSIONS, reason="no v4 yet")
@pytest.mark.parametrize("language", LANGUAGES)
def test_v4_shows_the_catalogue_in_the_system_prompt_and_the_skill_body_as_a_tool_result(
    built_site, language
):
    fragment = hood(built_site, language, "v4")
    calls = calls_of(fragment)
    system = own(calls[0], "hood-system")
    assert "hood-new" in classes(system)
    assert "<available_skills>\n- commit-message: " in code_text(system)
    assert all("hood-ref" in classes(own(call, "hood-system")) for call in calls[1:])
    assert json.loads(code_text(own(calls[0], "hood-tools")))[-1]["name"] == "Skill"
    messages = own(calls[1], "hood-messages")
    new_message = next(item for item in messages if "hood-new" in classes(item))
    assert '"content": "<skill_content name=\\"commit-message\\">' in code_text(new_message)


# -- the "What changed" cards -------------------------------------------------------------------


def definitions_by_regex(source: str) -> dict[str, str]:
    """Each top-level def/class, from its line to the next line that starts at column 0."""
    found, name, lines = {}, None, []
    for line in source.splitlines() + ["#end"]:
        if line and not line[0].isspace() and not line.startswith(")"):
            if name:
                found[name] = "\n".join(lines).rstrip()
            match = re.match(r"(?:async )?(?:def|class) (\w+)", line)
            name, lines = (match[1], [line]) if match else (None, [])
        elif name:
            lines.append(line)
    return found


def declared_tools(version: str) -> set[str]:
    return {tool["name"] for body in bodies(version) for tool in body.get("tools", [])}


def card_values(card: ET.Element) -> dict[str, object]:
    values = {}
    for dd in card.iter("dd"):
        key = dd.get("data-key")
        if key == "lines":
            values[key] = (int(dd.get("data-added")), int(dd.get("data-removed")))
        else:
            values[key] = [code.text for code in dd.iter("code")]
    return values


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("old, new", PAIRS)
def test_the_what_changed_card_matches_a_count_made_another_way(built_site, old, new, language):
    html = html_of(built_site, language, f"{new}.md")
    card = card_values(element_at(html, '<div class="admonition abstract hood-card"'))
    old_source = (ROOT / SCRIPTS[old]).read_text(encoding="utf-8")
    new_source = (ROOT / SCRIPTS[new]).read_text(encoding="utf-8")
    # the diff as the page shows it, folded below the card
    [diff] = [block for block in code_blocks(html) if block[:1] == [f"--- {SCRIPTS[old]}"]]
    assert card["lines"] == (
        sum(line.startswith("+") for line in diff[2:]),
        sum(line.startswith("-") for line in diff[2:]),
    )
    assert html.index("hood-card") < html.index(f"--- {SCRIPTS[old]}")
    # the tools: what the demos actually declared to the model
    assert set(card["tools"]) == declared_tools(new) - declared_tools(old)
    old_definitions = definitions_by_regex(old_source)
    new_definitions = definitions_by_regex(new_source)
    assert card["functions"] == [name for name in new_definitions if name not in old_definitions]
    assert card["changed"] == [
        name
        for name in new_definitions
        if name in old_definitions and new_definitions[name] != old_definitions[name]
    ]
    heading = re.compile(r"^# -- ([a-z_/]+) -- ", re.M)
    assert card["sections"] == [
        name for name in heading.findall(new_source) if name not in heading.findall(old_source)
    ]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("old, new", PAIRS)
def test_the_full_diff_is_folded_and_opens_without_javascript(built_site, old, new, language):
    html = html_of(built_site, language, f"{new}.md")
    folded = element_at(html[html.index("hood-card") :], "<details")
    assert folded.get("open") is None
    assert f"--- {SCRIPTS[old]}" in "".join(folded.itertext())


# -- charts ------------------------------------------------------------------------------------


def chart(html: str, ident: str) -> ET.Element:
    figure = element_at(html[html.rindex("<figure", 0, html.index(f'"{ident}-t')) :], "<figure")
    assert "hood-chart" in classes(figure)
    return figure


def bars(figure: ET.Element) -> list[tuple[float, str]]:
    """(width, the text after the bar) of each bar, top to bottom."""
    svg = figure.find("{http://www.w3.org/2000/svg}svg")
    shapes = list(svg)
    return [
        (float(shape.get("width")), shapes[index + 1].text)
        for index, shape in enumerate(shapes)
        if shape.tag.endswith("rect")
    ]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_gistdex_numbers_are_typed_once_and_drawn_to_scale(built_site, language):
    source = (ROOT / f"docs_{language}" / "context-budget.md").read_text(encoding="utf-8")
    html = html_of(built_site, language, "context-budget.md")
    for name, value in GISTDEX.items():
        if value >= 1000:  # written as digits only through {{ gistdex.* }}
            assert f"{value:,}" not in source
            assert f"{{{{ gistdex.{name} }}}}" in source
        assert f"{value:,}" in html
    assert not PLACEHOLDER.search(html)
    figure = chart(html, "chart-gistdex")
    drawn = bars(figure)
    widths = [width for width, _ in drawn]
    expected = [GISTDEX[key] for key in ("response_tokens", "detailed_tokens", "summary_tokens")]
    assert [round(width / widths[0] * expected[0]) for width in widths] == pytest.approx(
        expected, rel=0.01
    )
    svg = figure.find("{http://www.w3.org/2000/svg}svg")
    limit = next(shape for shape in svg if shape.tag.endswith("line"))
    left = float(next(shape for shape in svg if shape.tag.endswith("rect")).get("x"))
    assert float(limit.get("x1")) - left == pytest.approx(
        widths[0] * GISTDEX["limit_tokens"] / GISTDEX["response_tokens"], abs=1
    )
    assert drawn[0][1] == ("{:,} tokens" if language == "en" else "{:,} トークン").format(
        GISTDEX["response_tokens"]
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_context_hygiene_chart_draws_the_run_whose_numbers_the_page_quotes(
    built_site, language
):
    numbers = json.loads((GENERATED / "numbers.json").read_text(encoding="utf-8"))
    figure = chart(html_of(built_site, language, "v3.md"), "chart-hygiene")
    sizes = [int(re.sub(r"\D", "", text)) for _, text in bars(figure)]
    svg = figure.find("{http://www.w3.org/2000/svg}svg")
    kinds = [shape.get("class") for shape in svg if shape.tag.endswith("rect")]
    groups = [shape.text for shape in svg if shape.get("font-weight") == "bold"]
    assert len(groups) == 2
    inline = sizes[: kinds.index("bar-sub") - 1]  # the first group: v2 reads, one bar per call
    delegated_main = [size for size, kind in zip(sizes, kinds, strict=True) if kind == "bar-main"]
    assert max(inline) == int(numbers["hygiene.inline"].replace(",", ""))
    assert max(delegated_main[len(inline) :]) == int(numbers["hygiene.delegated"].replace(",", ""))
    assert kinds.count("bar-sub") == len(inline)  # the subagent reads in as many calls as v2 did


@pytest.mark.parametrize("language", LANGUAGES)
def test_charts_use_the_page_colours_and_load_nothing(built_site, language):
    for page, ident in [("v3.md", "chart-hygiene"), ("context-budget.md", "chart-gistdex")]:
        figure = chart(html_of(built_site, language, page), ident)
        svg = figure.find("{http://www.w3.org/2000/svg}svg")
        assert svg.get("fill") == "currentColor" and svg.get("role") == "img"
        text = ET.tostring(figure, encoding="unicode")
        assert "http" not in text.replace("http://www.w3.org/2000/svg", "")
        assert not re.search(r'fill="#|stroke="#|<script', text)
        title = svg.find("{http://www.w3.org/2000/svg}title").text
        assert bool(re.search(r"[\u3040-\u30ff]", title)) == (language == "ja")


# -- the pages work offline, without JavaScript, in both languages -------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("version", VERSIONS)
def test_the_hood_needs_no_script_and_no_other_host(built_site, version, language):
    fragment = hood(built_site, language, version)
    assert not [element for element in fragment.iter() if element.tag in ("script", "img")]
    assert not [element for element in fragment.iter() if element.get("src")]
    links = [element.get("href") for element in fragment.iter() if element.get("href")]
    ids = {element.get("id") for element in fragment.iter()}
    assert links and all(link.startswith("#") and link[1:] in ids for link in links)
    calls = calls_of(fragment)
    assert all(call.get("open") is None for call in calls)  # closed, opened by a click
    label = calls[0].find("summary").find("strong").text
    assert label == ("Call 1" if language == "en" else "呼び出し 1")


def test_one_stylesheet_serves_both_languages_and_is_linked(built_site):
    css = ROOT / "docsgen" / "overrides" / "assets" / "stylesheets" / "hood.css"
    for folder in (built_site, built_site / "ja"):
        assert (folder / "assets" / "stylesheets" / "hood.css").read_bytes() == css.read_bytes()
    for language in LANGUAGES:
        assert 'href="../assets/stylesheets/hood.css"' in html_of(built_site, language, "v1.md")
    assert "var(--md-" in css.read_text(encoding="utf-8")


def test_search_leaves_the_requests_out(built_site):
    """The prose of the section is searchable; the JSON of every request would drown it."""
    sections = {built_site: "v1/#under-the-hood", built_site / "ja": "v1/#内部を見る"}
    for folder, anchor in sections.items():
        index = json.loads((folder / "search" / "search_index.json").read_text(encoding="utf-8"))
        [section] = [doc for doc in index["docs"] if doc["location"] == anchor]
        assert "messages" in section["text"]
        assert not [doc for doc in index["docs"] if "toolu_01scripted" in doc["text"]]


@pytest.mark.skipif("v5" not in VERSIONS, reason="no v5 yet")
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_v5_chart_marks_the_summary_request_and_the_drop_after_it(built_site, language):
    """The request that carries v5's summary question is drawn apart and named; the summary line
    says how large the history grew, which call asked for the summary, and where it starts again.
    The page finds the summary request by the fresh history after it; here it is found by the
    question v5 sends."""
    question = constant(ROOT / SCRIPTS["v5"], "SUMMARY_QUESTION")
    main = [
        body
        for body, record in zip(bodies("v5"), records("v5"), strict=True)
        if record["track"] == MAIN
    ]
    sizes = [record["size"] for record in records("v5") if record["track"] == MAIN]
    asked = [
        number
        for number, body in enumerate(main, 1)
        if question in plain_text(body["messages"][-1]["content"])
    ]
    assert asked, "the v5 demo does not compact"
    html = html_of(built_site, language, "v5.md")
    svg = chart(html, "hood-v5-chart").find("{http://www.w3.org/2000/svg}svg")
    kinds = [shape.get("class") for shape in svg if shape.tag.endswith("rect")]
    assert [number for number, kind in enumerate(kinds, 1) if kind == "bar-summary"] == asked
    first = asked[0]
    summary = next(
        p for p in hood(built_site, language, "v5").iter("p") if "hood-summary" in classes(p)
    ).text
    for figure in (f"{sizes[0]:,}", f"{max(sizes):,}", f"{sizes[first]:,}"):
        assert figure in summary, (figure, summary)
    assert sizes[first] < sizes[first - 1]  # the fresh history is smaller than what it replaced
