"""v1 is the file every reader opens first, so it has a size budget.

The budget counts lines of code, as line counters such as cloc do: blank lines, comment lines and docstrings
are left out, because they are what makes the file readable and nobody should save on them. The count is
printed too (`python -m pytest tests/test_size.py -s`), with the file's length beside it.
"""
import ast

from tests.agents import ROOT

V1_CODE_BUDGET = 250  # issue 2: "a standalone script ... a reader can read top to bottom, <= 250 lines"


def code_lines(source: str) -> list[str]:
    """The lines of a Python source that are code: not blank, not only a comment, not part of a docstring."""
    docstring_lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstring_lines.update(range(first.lineno, first.end_lineno + 1))
    return [line for number, line in enumerate(source.splitlines(), 1)
            if line.strip() and not line.lstrip().startswith("#") and number not in docstring_lines]


def test_code_lines_leave_out_blank_lines_comments_and_docstrings():
    source = '"""Module\ndocstring."""\n\n# a comment\ndef f():\n    """Doc."""\n    return "#"  # kept\n'
    assert code_lines(source) == ["def f():", '    return "#"  # kept']


def test_v1_stays_within_its_size_budget():
    source = (ROOT / "v1_basic.py").read_text(encoding="utf-8")
    code = code_lines(source)
    print(f"\nv1_basic.py: {len(code)} lines of code, {len(source.splitlines())} lines in the file")
    assert len(code) <= V1_CODE_BUDGET, f"v1_basic.py has {len(code)} lines of code; the budget is {V1_CODE_BUDGET}"
