"""A tool call the model got wrong becomes an error it can read, never a crash."""

import jsonschema

from plumbing.budget import clip, cut_short
from plumbing.replies import failed

# Characters of an error message: an error may echo a huge input. There is room for a failed
# subagent's last message (REPORT_BUDGET, 3,000 characters in v3), so that it comes back whole.
ERROR_BUDGET = 5000


class ToolError(Exception):
    """A failure the model can read and fix, such as a bad path or an ambiguous edit."""


def check_tool_call(call, tools: list) -> None:
    """The call names a tool this agent was given, with input that fits its schema."""
    schemas = {tool["name"]: tool["input_schema"] for tool in tools}  # only this agent's tools
    if call.name not in schemas:
        raise ToolError(f"unknown tool {call.name!r}; the tools you have are: {', '.join(schemas)}")
    # Not jsonschema.validate(): that checks the schema itself against the JSON Schema
    # metaschema first, on every call, which took longer than the rest of the call together.
    validator = jsonschema.validators.validator_for(schemas[call.name])(schemas[call.name])
    try:
        exc = jsonschema.exceptions.best_match(validator.iter_errors(call.input))
    except RecursionError:  # input nested thousands of levels deep
        raise ToolError(f"invalid input for {call.name}: nested too deeply to check") from None
    if exc is not None:
        where = "/".join(str(part) for part in exc.absolute_path) or "input"
        where = cut_short(where, 200)
        raise ToolError(f"invalid input for {call.name} ({where}): {schema_problem(exc)}")


def tool_error_text(name: str, exc: Exception) -> str:
    """What the model reads when a tool fails: "error: " and a ToolError's words, or anything
    else named. Either way it is cut to ERROR_BUDGET, since an error can echo its input."""
    if isinstance(exc, ToolError):
        text = str(exc)
    else:
        text = f"{name} failed: {type(exc).__name__}: {exc}"
    return clip(failed(text), ERROR_BUDGET)


def schema_problem(exc: jsonschema.ValidationError) -> str:
    """The validator's message, unless it would echo a huge value back into the context."""
    if len(exc.message) < 300:
        return exc.message
    rule = cut_short(repr(exc.validator_value), 200)
    return f"breaks the rule {exc.validator}: {rule}"
