"""The five scripts read as lessons: the lesson first, the plumbing fenced at the end, one idea a
line.

The measures (issue 11): where `def agent_loop` starts in v1; how many lines of code stand above the
`# -- plumbing --` heading, in v1 and added by each later version; the line length; and a few
constructs a learner would have to decode. Lines of code are counted as cloc counts them: no blank
lines, comment lines or docstrings. Run `python -m pytest tests/test_lesson.py -s` to see them.
"""

import ast
import io
import itertools
import re
import tokenize
from pathlib import Path

import pytest

from docsgen.numbers import code_lines, lesson_code_lines, plumbing_import_lines, plumbing_line
from tests.agents import ROOT, SCRIPTS, VERSIONS

AGENT_LOOP_BY_LINE = 120  # v1: `def agent_loop` starts within the first 120 lines
V1_LESSON_BUDGET = 150  # v1: code lines of the lesson (all but the plumbing import block)
# lines in all, blank lines and docstrings included
FILE_LINE_BUDGETS = {"v1": 260, "v4": 700, "v5": 720, "v6": 860}
ALL_SCRIPTS_LINE_BUDGET = 3260  # the six scripts together
STEP_BUDGETS = {"v2": 70, "v3": 110, "v4": 110, "v5": 70, "v6": 90}  # lesson code lines added
LINE_LENGTH = 100


def source_of(version: str) -> str:
    return (ROOT / SCRIPTS[version]).read_text(encoding="utf-8")


def construct_problems(source: str) -> list[str]:
    """The constructs a learner must decode, each with its line: `:=`, a conditional expression
    run for its effect, next(generator, default), a generator unpacked into names, a comprehension
    with more than one `for` or `if`, and two statements on one line."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.NamedExpr):
            problems.append(f"{where}: walrus operator :=")
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.IfExp):
            problems.append(f"{where}: a conditional expression used as a statement")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "next" and node.args and isinstance(node.args[0], ast.GeneratorExp):
                problems.append(f"{where}: next(generator, default) used as a search")
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.GeneratorExp):
            if isinstance(node.targets[0], ast.Tuple | ast.List):
                problems.append(f"{where}: a generator unpacked into names")
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            conditions = sum(len(generator.ifs) for generator in node.generators)
            if len(node.generators) > 1 or conditions > 1:
                problems.append(f"{where}: a comprehension with more than one for or if")
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for token in tokens:
        if token.type == tokenize.OP and token.string == ";":
            problems.append(f"line {token.start[0]}: two statements on one line")
    return problems


# -- the measures themselves work --


def test_code_lines_leave_out_blank_lines_comments_and_docstrings():
    source = ('"""Module\ndocstring."""\n\n# a comment\n'
              'def f():\n    """Doc."""\n    return "#"  # kept\n')
    assert code_lines(source) == [5, 7]


@pytest.mark.parametrize(
    "source",
    [
        "if (n := len(x)) > 1:\n    pass\n",
        "print('a') if x else print('b')\n",
        "hit = next((h for h in table if h), None)\n",
        "first, second = (part for part in pair)\n",
        "pairs = [(a, b) for a in x for b in y]\n",
        "kept = [a for a in x if a if a > 1]\n",
        "a = 1; b = 2\n",
    ],
)
def test_each_banned_construct_is_found(source):
    assert construct_problems(source)


def test_plain_code_has_no_problems():
    source = "hint = 'a' if x else 'b'\nnames = [n for n in x if n]\nfirst = next(iter(x))\n"
    assert construct_problems(source) == []


# -- the scripts --


def test_v1_reaches_the_loop_early_and_keeps_its_lesson_small():
    source = source_of("v1")
    starts = [
        number
        for number, line in enumerate(source.splitlines(), 1)
        if line.startswith("def agent_loop(")
    ]
    loop_line = starts[0]
    lesson = lesson_code_lines(source)
    print(
        f"\nv1_basic.py: def agent_loop at line {loop_line}; {lesson} lesson code lines (the "
        f"plumbing imports at line {plumbing_line(source)} left out); "
        f"{len(code_lines(source))} code lines in all"
    )
    assert loop_line <= AGENT_LOOP_BY_LINE
    assert lesson <= V1_LESSON_BUDGET


PAIRS = list(itertools.pairwise(VERSIONS))


@pytest.mark.parametrize(("older", "newer"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_each_step_adds_a_small_lesson(older, newer):
    added = lesson_code_lines(source_of(newer)) - lesson_code_lines(source_of(older))
    print(
        f"\n{older} -> {newer}: {added} lesson code lines added "
        f"(budget {STEP_BUDGETS[newer]})"
    )
    assert added <= STEP_BUDGETS[newer]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_line_fits_in_100_characters(version):
    long_lines = [
        f"line {number}: {len(line)} characters"
        for number, line in enumerate(source_of(version).splitlines(), 1)
        if len(line) > LINE_LENGTH
    ]
    assert long_lines == []


@pytest.mark.parametrize("version", VERSIONS)
def test_no_construct_a_learner_must_decode(version):
    assert construct_problems(source_of(version)) == []


# -- the v1 chapter's table of the plumbing --


@pytest.mark.parametrize("page", ["docs_en/v1.md", "docs_ja/v1.md"])
def test_the_v1_chapter_has_a_row_for_each_plumbing_module_v1_imports(page):
    """Every module v1 imports from the package has a row that links to its file, and every name
    in a row is defined in that module."""
    imported = {
        node.module.removeprefix("plumbing.")
        for node in ast.parse(source_of("v1")).body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("plumbing.")
    }
    text = (ROOT / page).read_text(encoding="utf-8")
    plumbing_part = text[text.index("### The plumbing" if "en" in page else "### 配管") :]
    rows = {}
    for line in plumbing_part.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        link = re.fullmatch(r"\[`([a-z_]+)`\]\((\S+)\)", cells[0])
        if link and len(cells) == 3:
            assert link[2].endswith(f"/plumbing/{link[1]}.py"), link[2]
            rows[link[1]] = cells[1]
    assert sorted(rows) == sorted(imported), "one row per module v1 imports, linked to its file"
    for module, names in rows.items():
        tree = ast.parse((ROOT / "plumbing" / f"{module}.py").read_text(encoding="utf-8"))
        kinds = ast.FunctionDef | ast.ClassDef
        defined = {node.name for node in tree.body if isinstance(node, kinds)}
        defined |= {target.id for node in tree.body if isinstance(node, ast.Assign)
                    for target in node.targets if isinstance(target, ast.Name)}
        for name in names.replace("、", ",").split(","):
            assert name.strip().strip("`") in defined, f"{name} is not in plumbing/{module}.py"


def test_the_scripts_stay_small_now_that_the_plumbing_is_one_package():
    sizes = {version: len(source_of(version).splitlines()) for version in VERSIONS}
    print(f"\nlines in all: {sizes}; together {sum(sizes.values())}")
    for version, budget in FILE_LINE_BUDGETS.items():
        assert sizes[version] <= budget, f"{SCRIPTS[version]} has {sizes[version]} lines"
    assert sum(sizes.values()) <= ALL_SCRIPTS_LINE_BUDGET


def test_no_script_imports_another_version_and_each_imports_the_plumbing_in_one_block():
    for version in VERSIONS:
        tree = ast.parse(source_of(version))
        imported = [node.module for node in tree.body if isinstance(node, ast.ImportFrom)]
        imported += [alias.name for node in tree.body if isinstance(node, ast.Import)
                     for alias in node.names]
        versions = tuple(f"{Path(script).stem.split('_')[0]}_" for script in SCRIPTS.values())
        assert not [name for name in imported if name and name.startswith(versions)]
        plumbing_lines = sorted(plumbing_import_lines(source_of(version)))
        first, last = plumbing_lines[0], plumbing_lines[-1]
        block = source_of(version).splitlines()[first - 1:last]
        assert all(line.startswith(("from plumbing.", " ")) for line in block), block
        others = [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                  and node.lineno > last]
        assert not others, "every import stands at the top: the plumbing in one block"
