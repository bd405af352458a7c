"""docsgen/charts.py: the charts as a reader sees them, drawn here in the test's own process.

The mutation run of 2026-11-29 found every chart function reached only by the site build (a
child process, so mutmut saw no test), or by a test that builds the site for each mutant and
timed out. Here each chart is drawn from figures the test chooses and read back as SVG: which
bars, which words, how long each bar is against the others and against the limit, where each
text sits, in both layouts (wide, and the phone's narrow one) and both languages.
"""

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from docsgen.charts import (
    BAR,
    BAR_ROW,
    GISTDEX,
    LABELS,
    NARROW_WIDTH,
    ROW,
    TEXT_ROW,
    WIDTH,
    Bar,
    Group,
    bar_chart,
    chart_files,
    text_width,
)

SVG = "{http://www.w3.org/2000/svg}"
# bench/context_hygiene.py --json, in small: v2 reads in three calls; v3's main agent calls twice
# around a subagent that reads in two. Every size differs, and the largest of each run is not
# its first or last call.
HYGIENE = {
    "previous": "v2",
    "inline": 3000,
    "delegated": 1200,
    "requests": {
        "inline": [
            {"track": "default", "size": 1000},
            {"track": "default", "size": 3000},
            {"track": "default", "size": 2000},
        ],
        "delegated": [
            {"track": "default", "size": 1100},
            {"track": "SUBAGENT: read", "size": 1500},
            {"track": "SUBAGENT: read", "size": 2500},
            {"track": "default", "size": 1200},
            {"track": "default", "size": 900},
        ],
    },
}


def latin_width(text: str) -> int:
    """What a text of Latin characters takes at 12 px: 0.6 of the font size each."""
    return math.ceil(len(text) * 12 * 0.6)


# -- reading a chart back --


def figure_of(html: str) -> ET.Element:
    figure = ET.fromstring(html)
    assert figure.tag == "figure" and figure.get("class") == "hood-chart"
    return figure


def drawings(figure: ET.Element) -> dict[str, ET.Element]:
    """The figure's two drawings by layout: "wide" and "narrow"."""
    found = {}
    for svg in figure.findall(f"{SVG}svg"):
        classes = svg.get("class").split()
        assert classes[0] == "hood-svg"
        found[classes[1].removeprefix("hood-")] = svg
    assert list(found) == ["wide", "narrow"]
    return found


def size_of(svg: ET.Element) -> tuple[int, int]:
    left, top, width, height = map(int, svg.get("viewBox").split())
    assert (left, top) == (0, 0)
    return width, height


def named_by(svg: ET.Element) -> tuple[str, str]:
    """The title and description a screen reader announces, through aria-labelledby."""
    title, desc = svg.get("aria-labelledby").split()
    assert svg.find(f"{SVG}title").get("id") == title
    assert svg.find(f"{SVG}desc").get("id") == desc
    return svg.find(f"{SVG}title").text, svg.find(f"{SVG}desc").text


def number(element: ET.Element, name: str) -> int:
    return int(element.get(name))


def wide_rows(svg: ET.Element) -> tuple[list[dict], list[ET.Element]]:
    """Each row of the wide drawing, top to bottom: a group's title, or a bar with its label and
    its value; and whatever is drawn after the rows (the limit and its label)."""
    shapes = [shape for shape in svg if shape.tag not in (f"{SVG}title", f"{SVG}desc")]
    rows, index = [], 0
    while index < len(shapes) and shapes[index].tag != f"{SVG}line":
        shape = shapes[index]
        if shape.get("font-weight") == "bold":
            rows.append({"group": shape})
            index += 1
        elif index + 1 < len(shapes) and shapes[index + 1].tag == f"{SVG}rect":
            label, bar, value = shapes[index : index + 3]
            rows.append({"label": label, "bar": bar, "value": value})
            index += 3
        else:
            break
    return rows, shapes[index:]


def narrow_rows(svg: ET.Element) -> tuple[list[dict], list[ET.Element]]:
    """Each row of the narrow drawing: a group's title, or a bar under its line of text, with the
    stretch of the limit that crosses it; and what is drawn after the rows."""
    shapes = [shape for shape in svg if shape.tag not in (f"{SVG}title", f"{SVG}desc")]
    rows, index = [], 0
    while index < len(shapes):
        shape = shapes[index]
        if shape.get("font-weight") == "bold":
            rows.append({"group": shape})
            index += 1
        elif index + 1 < len(shapes) and shapes[index + 1].tag == f"{SVG}rect":
            row = {"text": shape, "bar": shapes[index + 1]}
            index += 2
            if index < len(shapes) and shapes[index].tag == f"{SVG}line":
                row["limit"] = shapes[index]
                index += 1
            rows.append(row)
        else:
            break
    return rows, shapes[index:]


def bars_of(rows: list[dict]) -> list[dict]:
    return [row for row in rows if "bar" in row]


# -- the files --


def test_each_chart_is_made_in_both_languages_under_charts():
    files = chart_files(HYGIENE)
    assert sorted(files) == sorted(
        Path("charts", language, f"{name}.html")
        for language in ("en", "ja")
        for name in ("context-hygiene", "gistdex")
    )
    for path, html in files.items():
        figure = figure_of(html)
        wide, narrow = drawings(figure).values()
        caption = figure.find("figcaption").text
        assert named_by(wide)[0] == named_by(narrow)[0] == caption
        ident = {"gistdex": "chart-gistdex", "context-hygiene": "chart-hygiene"}[path.stem]
        assert wide.get("aria-labelledby") == f"{ident}-t {ident}-d"
        assert narrow.get("aria-labelledby") == f"{ident}-narrow-t {ident}-narrow-d"
        for svg in (wide, narrow):  # the page's own colours and font size
            assert (svg.get("fill"), svg.get("font-size"), svg.get("role")) == (
                "currentColor", "12", "img")
            assert svg.get("width") == "100%"


# -- the gistdex chart --


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_gistdex_chart_says_its_figures_in_words_and_bars(language):
    labels = LABELS[language]
    figure = figure_of(chart_files(HYGIENE)[Path("charts", language, "gistdex.html")])
    wide, narrow = drawings(figure).values()
    title, description = named_by(wide)
    assert title == labels["gistdex_title"]
    assert description == labels["gistdex_desc"].format(**GISTDEX)
    assert named_by(narrow) == (title, description)
    rows, after = wide_rows(wide)
    assert [row["label"].text for row in rows] == [
        labels["full"].format(results=3), labels["detailed"], labels["summary"]]
    assert [row["bar"].get("class") for row in rows] == ["bar-over", "bar-fit", "bar-fit"]
    assert [row["value"].text for row in rows] == [
        labels["tokens"].format(48_727), labels["at_most"].format(15_000),
        labels["at_most"].format(5_000)]
    line, label = after
    assert label.text == labels["limit"].format(25_000)
    assert "48,727" in rows[0]["value"].text and "25,000" in label.text
    narrow_bars, narrow_after = narrow_rows(narrow)
    pair = "{}: {}" if language == "en" else "{}：{}"
    assert [row["text"].text for row in narrow_bars] == [
        pair.format(row["label"].text, row["value"].text) for row in rows]
    assert [row["bar"].get("class") for row in narrow_bars] == ["bar-over", "bar-fit", "bar-fit"]
    assert [element.text for element in narrow_after] == [label.text]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_gistdex_bars_and_limit_are_drawn_to_one_scale_that_fits_the_drawing(language):
    figure = figure_of(chart_files(HYGIENE)[Path("charts", language, "gistdex.html")])
    wide, narrow = drawings(figure).values()
    values = [GISTDEX[name] for name in ("response_tokens", "detailed_tokens", "summary_tokens")]
    rows, (line, label) = wide_rows(wide)
    left = number(rows[0]["bar"], "x")
    widths = [number(row["bar"], "width") for row in rows]
    assert all(number(row["bar"], "x") == left for row in rows)
    assert widths == [round(value / values[0] * widths[0]) for value in values]
    limit_x = left + round(GISTDEX["limit_tokens"] / values[0] * widths[0])
    assert number(line, "x1") == number(line, "x2") == number(label, "x") == limit_x
    assert label.get("text-anchor") == "middle"
    # the largest bar and its value fit the drawing, and leave no more room than the value needs
    width, _ = size_of(wide)
    assert width == WIDTH
    end_of_value = left + widths[0] + 6 + text_width(rows[0]["value"].text)
    assert 0 <= width - end_of_value <= 190 - text_width(rows[0]["value"].text) - 6
    assert width - left - widths[0] == 190  # the room kept right of the longest bar
    # narrow: the largest bar 8 px short of the edge, the limit at the same share of it
    narrow_bars, (narrow_label,) = narrow_rows(narrow)
    narrow_widths = [number(row["bar"], "width") for row in narrow_bars]
    assert size_of(narrow)[0] == NARROW_WIDTH
    assert narrow_widths[0] == NARROW_WIDTH - 8
    assert narrow_widths == [round(value / values[0] * narrow_widths[0]) for value in values]
    narrow_limit = round(GISTDEX["limit_tokens"] / values[0] * narrow_widths[0])
    assert {number(row["limit"], "x1") for row in narrow_bars} == {narrow_limit}
    assert {number(row["limit"], "x2") for row in narrow_bars} == {narrow_limit}
    assert number(narrow_label, "x") == narrow_limit
    assert all(number(row["bar"], "x") == 0 and number(row["text"], "x") == 0
               for row in narrow_bars)


def test_the_labels_sit_left_of_the_bars_the_longest_8_px_from_the_edge():
    figure = figure_of(chart_files(HYGIENE)[Path("charts", "en", "gistdex.html")])
    rows, _ = wide_rows(drawings(figure)["wide"])
    left = number(rows[0]["bar"], "x")
    longest = max(latin_width(row["label"].text) for row in rows)
    for row in rows:  # right-aligned, 8 px before the bars
        assert row["label"].get("text-anchor") == "end"
        assert number(row["label"], "x") == left - 8
    assert left - 8 - longest == 8


def test_a_wide_character_is_drawn_twice_as_wide_as_a_latin_one():
    assert text_width("cache") == 36  # 5 × 7.2, rounded up
    assert text_width("キャッシュ") == 60  # 5 × 12
    assert text_width("v2 の 3") == 5 * 8 - 4 + 12  # four Latin characters and spaces, one kana
    assert text_width("") == 0


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_limit_runs_down_across_the_bars_under_its_label(language):
    figure = figure_of(chart_files(HYGIENE)[Path("charts", language, "gistdex.html")])
    wide, narrow = drawings(figure).values()
    rows, (line, label) = wide_rows(wide)
    _, height = size_of(wide)
    # the label's row on top, then one ROW per bar, 4 px to spare at the bottom
    assert height == ROW + ROW * len(rows) + 4
    assert number(label, "y") == ROW - 8 < number(line, "y1") == ROW - 4
    assert number(line, "y2") == height
    assert (line.get("stroke"), line.get("stroke-dasharray")) == ("currentColor", "4 3")
    for index, row in enumerate(rows):
        top = ROW + ROW * index
        assert number(row["label"], "y") == number(row["value"], "y") == top + 15
        assert number(row["bar"], "y") == top + 5 and number(row["bar"], "height") == BAR
    bars, (narrow_label,) = narrow_rows(narrow)
    assert size_of(narrow)[1] == ROW + (TEXT_ROW + BAR_ROW) * len(bars) + 4
    assert number(narrow_label, "y") == ROW - 8
    for index, row in enumerate(bars):  # text, then its bar; the limit crosses the bar only
        top = ROW + (TEXT_ROW + BAR_ROW) * index
        assert number(row["text"], "y") == top + 12
        assert number(row["bar"], "y") == top + TEXT_ROW + 1
        assert number(row["bar"], "height") == BAR_ROW - 5
        assert number(row["limit"], "y1") == number(row["bar"], "y")
        assert number(row["limit"], "y2") == top + TEXT_ROW + BAR_ROW - 2


def test_a_value_the_limit_would_run_through_is_written_after_the_limit():
    """In pixels: one label of 2 characters leaves 720 - 31 - 190 = 499 px for the bars, and a
    largest bar of 499 makes a value its own length. The limit at 300."""
    def row(value: int) -> Bar:
        return Bar("ab", value, "x" * 10)

    text = text_width("x" * 10)  # 73 px: ten times 7.2 in floating point is a hair over 72
    left = latin_width("ab") + 16
    assert 720 - left - 190 == 499
    rows = [
        row(499),  # past the limit: its value after its end
        row(300 - 6 - text - 4),  # its value would end 4 px before the limit: kept
        row(300 - 6 - text - 3),  # ... 3 px before: moved after the limit
        row(299),  # ends 1 px before the limit: moved
        row(100),  # its value far before the limit: kept
    ]
    figure = figure_of(bar_chart("c", rows, "t", "d", (300, "limit")))
    drawn, (line, _) = wide_rows(drawings(figure)["wide"])
    assert number(line, "x1") == left + 300
    ends = [left + number(shown["bar"], "width") for shown in drawn]
    assert ends == [left + bar.value for bar in rows]
    assert [number(shown["value"], "x") for shown in drawn] == [
        ends[0] + 6, ends[1] + 6, left + 306, left + 306, ends[4] + 6]


def test_a_limit_above_every_bar_is_drawn_at_the_end_of_the_scale():
    rows = [Bar("one", 100, "100"), Bar("two", 50, "50")]
    wide, narrow = drawings(figure_of(bar_chart("c", rows, "t", "d", (400, "limit")))).values()
    drawn, (line, label) = wide_rows(wide)
    left = number(drawn[0]["bar"], "x")
    room = 720 - left - 190
    assert number(line, "x1") == number(label, "x") == left + room
    assert [number(row["bar"], "width") for row in drawn] == [round(room / 4), round(room / 8)]
    narrow_drawn, _ = narrow_rows(narrow)
    assert {number(row["limit"], "x1") for row in narrow_drawn} == {NARROW_WIDTH - 8}
    assert [number(row["bar"], "width") for row in narrow_drawn] == [98, 49]


def test_a_figure_holds_its_two_drawings_and_its_caption_and_no_stray_text():
    figure = figure_of(chart_files(HYGIENE)[Path("charts", "en", "gistdex.html")])
    assert [child.tag for child in figure] == [f"{SVG}svg", f"{SVG}svg", "figcaption"]
    assert not "".join([figure.text or "", *(child.tail or "" for child in figure)]).strip()
    for svg in drawings(figure).values():
        assert not (svg.text or "").strip()
        assert not "".join(shape.tail or "" for shape in svg).strip()


# -- the context-hygiene chart --


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_hygiene_chart_shows_every_request_of_both_runs_in_order(language):
    labels = LABELS[language]
    figure = figure_of(chart_files(HYGIENE)[Path("charts", language, "context-hygiene.html")])
    wide, narrow = drawings(figure).values()
    title, description = named_by(wide)
    assert title == labels["hygiene_title"]
    assert description == labels["hygiene_desc"].format(inline=3000, main=1200, ratio=0.4)
    assert "3,000" in description and "1,200" in description and "0.400" in description
    rows, after = wide_rows(wide)
    assert after == []  # no limit
    groups = [row["group"].text for row in rows if "group" in row]
    assert groups == [labels["inline_group"].format(version="v2"), labels["delegated_group"]]
    assert [("group" in row) for row in rows] == [True, False, False, False,
                                                  True, False, False, False, False, False]
    main, sub = labels["main_call"], labels["sub_call"]
    shown = [(row["label"].text, row["value"].text, row["bar"].get("class"))
             for row in bars_of(rows)]
    size = labels["bytes"]
    assert shown == [
        (main.format(1), size.format(1000), "bar-main"),
        (main.format(2), size.format(3000), "bar-main"),
        (main.format(3), size.format(2000), "bar-main"),
        (main.format(1), size.format(1100), "bar-main"),
        (sub.format(1), size.format(1500), "bar-sub"),
        (sub.format(2), size.format(2500), "bar-sub"),
        (main.format(2), size.format(1200), "bar-main"),
        (main.format(3), size.format(900), "bar-main"),
    ]
    widths = [number(row["bar"], "width") for row in bars_of(rows)]
    sizes = [1000, 3000, 2000, 1100, 1500, 2500, 1200, 900]
    assert widths == [round(value / 3000 * widths[1]) for value in sizes]
    narrow_bars, narrow_after = narrow_rows(narrow)
    assert narrow_after == [] and not any("limit" in row for row in narrow_bars)
    pair = "{}: {}" if language == "en" else "{}：{}"
    assert [row["text"].text for row in bars_of(narrow_bars)] == [
        pair.format(label, value) for label, value, _ in shown]


def test_without_a_limit_the_rows_start_4_px_down_and_each_text_follows_its_bar():
    figure = figure_of(chart_files(HYGIENE)[Path("charts", "en", "context-hygiene.html")])
    wide, narrow = drawings(figure).values()
    rows, _ = wide_rows(wide)
    assert size_of(wide)[1] == 4 + ROW * len(rows) + 4
    for index, row in enumerate(rows):
        top = 4 + ROW * index
        if "group" in row:  # a group's title on the baseline a bar's text would have
            assert (number(row["group"], "x"), number(row["group"], "y")) == (0, top + 15)
            continue
        assert number(row["bar"], "y") == top + 5
        assert number(row["value"], "x") == number(row["bar"], "x") + number(
            row["bar"], "width") + 6
    assert number(bars_of(rows)[1]["bar"], "width") == 720 - number(rows[1]["bar"], "x") - 190
    narrow_drawn, _ = narrow_rows(narrow)
    heights = [ROW if "group" in row else TEXT_ROW + BAR_ROW for row in narrow_drawn]
    assert size_of(narrow)[1] == 4 + sum(heights) + 4
    top = 4
    for row, height in zip(narrow_drawn, heights, strict=True):
        if "group" in row:
            assert number(row["group"], "y") == top + 15
        else:
            assert number(row["text"], "y") == top + 12
            assert number(row["bar"], "y") == top + TEXT_ROW + 1
        top += height
    assert number(bars_of(narrow_drawn)[1]["bar"], "width") == NARROW_WIDTH - 8


def test_a_bar_too_small_to_see_is_drawn_one_pixel_wide_and_text_is_escaped():
    html = bar_chart("c", [Group("<a> & b"), Bar("x<y", 1, "1 & 2"), Bar("big", 100_000, "z")],
                     "t<", "d&")
    figure = figure_of(html)
    wide, narrow = drawings(figure).values()
    rows, _ = wide_rows(wide)
    assert rows[0]["group"].text == "<a> & b"
    assert (rows[1]["label"].text, rows[1]["value"].text) == ("x<y", "1 & 2")
    assert number(rows[1]["bar"], "width") == 1
    narrow_drawn, _ = narrow_rows(narrow)
    assert number(narrow_drawn[1]["bar"], "width") == 1
    assert narrow_drawn[1]["text"].text == "x<y: 1 & 2"  # the default pair
    assert named_by(wide) == ("t<", "d&") and figure.find("figcaption").text == "t<"
