"""Templates of the current era: AgentV renders prompts and vars with Nunjucks; chatconv renders
the same syntax with Jinja2, as AgentV configures Nunjucks (no autoescaping, an undefined name
renders "", the one filter `load`), and refuses what Jinja2 would read differently.

`render(value, variables)` renders every string inside a value. A string that is exactly one
`{{ name }}` or `{{ a.b }}` whose path resolves gives that var's own value (a message list stays a
list), as AgentV's whole-value rule does. The context is `{**vars, "vars": vars}`, so
`{{ input }}` and `{{ vars.input }}` are the same.

Templates run under limits (template_limits.py; nesting as deep as Python compiles, here): a
template past one is a `template-limit` problem, never a hang, a traceback or gigabytes taken.
"""

from __future__ import annotations

import copy
import json
import re
from functools import lru_cache
from typing import Any

from jinja2 import ChainableUndefined, TemplateError, TemplateSyntaxError, UndefinedError
from jinja2.runtime import TemplateReference

from .template_limits import LimitedEnvironment, TemplateLimit, checked_integer, deadline, planned_size, rendered

# A string that is one `{{ dotted.name }}` and nothing else (white space aside).
_WHOLE_VALUE = re.compile(r"^\s*\{\{\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*\}\}\s*$")
_MISSING = object()
# Jinja2's global functions that Nunjucks has not (it has range, cycler and joiner): a template
# calling one fails in AgentV, so it is refused here too, not rendered.
JINJA_ONLY_GLOBALS = ("lipsum", "namespace", "dict")


class TemplateProblem(Exception):
    """A template that cannot be rendered: `code` is `template` (its syntax, or a failure while
    rendering) or `unsupported` (a construct Jinja2 would read otherwise than Nunjucks)."""

    def __init__(self, message: str, hint: str, code: str, line: int | None = None):
        super().__init__(message)
        self.message, self.hint, self.code, self.line = message, hint, code, line


def limit_problem(exc: TemplateLimit) -> TemplateProblem:
    """The problem of a template past a limit."""
    return TemplateProblem(f"the template goes past a limit: {exc}",
                           "make the template do less (fewer or smaller loops, shorter strings, smaller numbers)",
                           "template-limit")


class _Embedded(Exception):
    """A list or an object written into text (Nunjucks would print `[object Object]`)."""


def _as_text(value: Any) -> Any:
    """What Nunjucks prints for a value, where Python's str() differs. (`self` is no name of
    Nunjucks's: undefined, it prints nothing.)"""
    if value is None or isinstance(value, (ChainableUndefined, TemplateReference)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, dict)):
        raise _Embedded(type(value).__name__)
    return value


@lru_cache(maxsize=1)
def _environment() -> LimitedEnvironment:
    env = LimitedEnvironment(autoescape=False, undefined=ChainableUndefined,
                             finalize=lambda value: _as_text(checked_integer(value)), keep_trailing_newline=True)
    env.filters["load"] = json.loads  # AgentV's one built-in filter (JSON.parse)
    env.filters["dump"] = lambda value, indent=None: json.dumps(value, indent=indent, ensure_ascii=False)
    for name in JINJA_ONLY_GLOBALS:  # AgentV's Nunjucks: "Unable to call `lipsum`, which is undefined"
        del env.globals[name]
    return env


@lru_cache(maxsize=4096)
def _compiled(text: str):
    return _environment().from_string(text)


def _compiled_within_limits(text: str):
    """The compiled template; TemplateSyntaxError for its syntax, TemplateLimit for a template too
    big, too deep or too slow to read (Python's parser and compiler have limits of their own)."""
    planned_size(len(text))
    try:
        return _compiled(text)
    except (RecursionError, MemoryError):
        raise TemplateLimit("it nests deeper than chatconv reads") from None
    except SyntaxError as exc:  # Python's, of the code made of it: "too many statically nested blocks"
        if isinstance(exc, TemplateSyntaxError):
            raise
        raise TemplateLimit(f"it nests deeper than Python compiles ({exc.msg})") from None


def check_syntax(text: str) -> None:
    """Raise TemplateProblem when `text` is not a template Jinja2 can read, or is past a limit."""
    try:
        with deadline():
            _compiled_within_limits(text)
    except TemplateSyntaxError as exc:
        raise _syntax_problem(exc) from None
    except TemplateLimit as exc:
        raise limit_problem(exc) from None


def _syntax_problem(exc: TemplateSyntaxError) -> TemplateProblem:
    filter_name = re.match(r"No filter named '([^']+)'", exc.message or "")
    if filter_name:
        return TemplateProblem(
            f"the filter {filter_name.group(1)!r} is not one chatconv knows (custom `nunjucks_filters` "
            "are JavaScript modules, which chatconv does not run)", "use the built-in filters: load, dump, "
            "and Jinja2's own (upper, lower, trim, join, default, ...)", "unsupported", exc.lineno)
    return TemplateProblem(f"template syntax: {exc.message}", "fix the {{ }} / {% %} tags of this template",
                           "template", exc.lineno)


def _lookup(variables: dict, dotted: str) -> Any:
    value: Any = {**variables, "vars": variables}
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def whole_value_name(text: str) -> str | None:
    """The dotted name a string is exactly `{{ name }}` of, else None."""
    match = _WHOLE_VALUE.match(text)
    return match.group(1) if match else None


def render_string(text: str, variables: dict) -> Any:
    """One string rendered; the whole-value rule may give back a var's value (not a string)."""
    if "{" not in text:
        return text
    name = whole_value_name(text)
    if name is not None:
        value = _lookup(variables, name)
        if value is not _MISSING and value is not None:
            return copy.deepcopy(value)
    try:
        with deadline():
            return rendered(_compiled_within_limits(text), {**variables, "vars": variables})
    except TemplateSyntaxError as exc:
        raise _syntax_problem(exc) from None
    except TemplateLimit as exc:
        raise limit_problem(exc) from None
    except RecursionError:  # a macro that calls itself without end
        raise limit_problem(TemplateLimit("it calls itself deeper than Python allows")) from None
    except _Embedded as exc:
        raise TemplateProblem(
            f"{'a list' if str(exc) == 'list' else 'an object'} written into text (Nunjucks would print "
            "it as '[object Object]' or 'a,b')", "write the var alone as '{{ name }}' to use its value, "
            "or pick a field of it ({{ name.field }}), or `| dump` it as JSON", "unsupported") from None
    except UndefinedError as exc:  # a name called that is no function: lipsum(), or a JavaScript method
        raise TemplateProblem(f"template cannot be rendered: {exc}", "Nunjucks has the functions range, cycler "
                              "and joiner (not Jinja2's lipsum, namespace, dict), and no JavaScript method calls "
                              "(.toUpperCase(), ...): use filters (| upper)", "unsupported") from None
    except TemplateError as exc:  # e.g. a JavaScript method call Jinja2 cannot make
        raise TemplateProblem(f"template cannot be rendered: {exc}",
                              "Nunjucks JavaScript method calls (.toUpperCase(), ...) are not Jinja2's; "
                              "use filters (| upper)", "unsupported") from None
    except Exception as exc:  # the template's own running failed: `| load` of non-JSON, 1 / 0, a huge range
        raise TemplateProblem(f"template cannot be rendered: {type(exc).__name__}: {exc}",
                              "fix the template, or the vars it is rendered with", "template") from None


def render(value: Any, variables: dict) -> Any:
    """Every string inside `value` (lists and objects walked, keys kept) rendered."""
    if isinstance(value, str):
        return render_string(value, variables)
    if isinstance(value, list):
        return [render(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: render(item, variables) for key, item in value.items()}
    return value
