"""Templates of the current era: AgentV renders prompts and vars with Nunjucks; chatconv renders
the same syntax with Jinja2, as AgentV configures Nunjucks (no autoescaping, an undefined name
renders "", the one filter `load`), and refuses what Jinja2 would read differently.

`render(value, variables)` renders every string inside a value. A string that is exactly one
`{{ name }}` or `{{ a.b }}` whose path resolves gives that var's own value (a message list stays a
list), as AgentV's whole-value rule does. The context is `{**vars, "vars": vars}`, so
`{{ input }}` and `{{ vars.input }}` are the same.

A template is a program the eval file's author wrote, run on the user's machine: it runs under
limits (TEMPLATE_SECONDS to read and render each string, its output and every string or list it
makes within --max-file-bytes, integers within INTEGER_BITS, nesting as deep as Python reads).
A template past one is a `template-limit` problem, never a hang, a traceback or gigabytes taken.
"""

from __future__ import annotations

import copy
import json
import re
import signal
import threading
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Iterator

from jinja2 import ChainableUndefined, TemplateError, TemplateSyntaxError, pass_eval_context
from jinja2.compiler import CodeGenerator
from jinja2.runtime import Namespace, TemplateReference
from jinja2.filters import do_format as _FORMAT
from jinja2.filters import do_replace as _REPLACE
from jinja2.sandbox import SandboxedEnvironment

from ..limits import LIMITS, size_text

TEMPLATE_SECONDS = 2.0  # to read and render one string (a loop of loops would run for hours)
INTEGER_BITS = 14_000  # about the 4,300 digits Python writes an integer with (no more: it raises)

# A string that is one `{{ dotted.name }}` and nothing else (white space aside).
_WHOLE_VALUE = re.compile(r"^\s*\{\{\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*\}\}\s*$")
_MISSING = object()


class TemplateProblem(Exception):
    """A template that cannot be rendered: `code` is `template` (its syntax, or a failure while
    rendering) or `unsupported` (a construct Jinja2 would read otherwise than Nunjucks)."""

    def __init__(self, message: str, hint: str, code: str, line: int | None = None):
        super().__init__(message)
        self.message, self.hint, self.code, self.line = message, hint, code, line


class _Limit(Exception):
    """A template past one of its limits, said as `message`."""


def _limit_problem(exc: _Limit) -> TemplateProblem:
    return TemplateProblem(f"the template goes past a limit: {exc}",
                           "make the template do less (fewer or smaller loops, shorter strings, smaller numbers)",
                           "template-limit")


class _Embedded(Exception):
    """A list or an object written into text (Nunjucks would print `[object Object]`)."""


def _as_text(value: Any) -> Any:
    """What Nunjucks prints for a value, where Python's str() differs. (`self` is no name of
    Nunjucks's: undefined, it prints nothing; a namespace is an object.)"""
    if value is None or isinstance(value, (ChainableUndefined, TemplateReference)):
        return ""
    if isinstance(value, Namespace):
        raise _Embedded("dict")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, dict)):
        raise _Embedded(type(value).__name__)
    return value


def _as_text_checked(value: Any) -> Any:
    if type(value) is int and value.bit_length() > INTEGER_BITS:
        raise _Limit(f"an integer of more than {INTEGER_BITS:,} bits is written")
    return _as_text(value)


def _sized(value: Any) -> Any:
    """`value`, when a string or a list it is within the output limit."""
    if isinstance(value, (str, list)) and len(value) > LIMITS.max_file_bytes:
        raise _Limit(f"a value of {len(value):,} characters or items is made "
                     f"(--max-file-bytes: {size_text(LIMITS.max_file_bytes)})")
    return value


def _planned_size(size: int) -> None:
    """Refuse, before it is made, a value of `size` characters or items past the output limit."""
    if size > LIMITS.max_file_bytes:
        raise _Limit(f"a value of {size:,} characters or items would be made "
                     f"(--max-file-bytes: {size_text(LIMITS.max_file_bytes)})")


_WIDTH = re.compile(r"%[-+ #0]*(\d*)(?:\.(\d+))?")


def _checked_format(text: str) -> None:
    """Refuse a %-format whose widths would make a value past the output limit ('%0999999999d')."""
    for width, precision in _WIDTH.findall(text):
        _planned_size(max(int(width or 0), int(precision or 0)))


class _Checked(SandboxedEnvironment):
    """Jinja2's sandbox, whose operators and joins refuse what would pass the limits before they
    make it: `'a' * 10**10`, `10 ** 10**6`, `'%0999999999d' % 1`, `x ~ x` doubled in a loop."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def call_binop(self, context, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name == "*":
            for sized, times in ((left, right), (right, left)):
                if isinstance(sized, (str, list)) and type(times) is int:
                    _planned_size(len(sized) * times)
            if type(left) is int and type(right) is int and left.bit_length() + right.bit_length() > INTEGER_BITS:
                raise _Limit(f"an integer of more than {INTEGER_BITS:,} bits would be made")
        elif operator_name == "**" and type(left) is int and type(right) is int and right > 0:
            if abs(left) > 1 and right * left.bit_length() > INTEGER_BITS:
                raise _Limit(f"an integer of more than {INTEGER_BITS:,} bits would be made")
        elif operator_name == "%" and isinstance(left, str):
            _checked_format(left)
        elif operator_name == "+" and isinstance(left, (str, list)) and isinstance(right, (str, list)):
            _planned_size(len(left) + len(right))
        return _sized(super().call_binop(context, operator_name, left, right))

    def joined(self, values: tuple) -> str:
        """`a ~ b`: the strings joined, within the output limit."""
        texts = [str(value) for value in values]
        _planned_size(sum(map(len, texts)))
        return "".join(texts)


class _CheckedCode(CodeGenerator):
    """The code of a template whose `~` joins through _Checked.joined (Jinja2's own join cannot be
    intercepted)."""

    def visit_Concat(self, node, frame) -> None:
        self.write("environment.joined((")
        for argument in node.nodes:
            self.visit(argument, frame)
            self.write(", ")
        self.write("))")


def _checked_filter(function, *width_arguments: int):
    """A filter whose width arguments (by position, after the value) and result stay within the
    output limit: `center(10**9)`, `indent(10**9)`, `lipsum(10**6)`."""
    def checked(*args, **kwargs):
        for position in width_arguments:
            if len(args) > position and type(args[position]) is int:
                _planned_size(args[position])
        for value in kwargs.values():
            if type(value) is int:
                _planned_size(value)
        return _sized(function(*args, **kwargs))
    if hasattr(function, "jinja_pass_arg"):  # the environment or context Jinja2 passes it first
        checked.jinja_pass_arg = function.jinja_pass_arg
    return checked


@pass_eval_context
def _checked_replace(environment, text, old, new, count=None):
    text, old, new = str(text), str(old), str(new)
    found = text.count(old) if old else len(text) + 1
    _planned_size(len(text) + min(found, count if type(count) is int and count >= 0 else found) * len(new))
    return _REPLACE(environment, text, old, new, count)


@lru_cache(maxsize=1)
def _environment() -> SandboxedEnvironment:
    env = _Checked(autoescape=False, undefined=ChainableUndefined, finalize=_as_text_checked,
                   keep_trailing_newline=True)
    env.code_generator_class = _CheckedCode
    env.filters["load"] = json.loads  # AgentV's one built-in filter (JSON.parse)
    env.filters["dump"] = lambda value, indent=None: json.dumps(value, indent=indent, ensure_ascii=False)
    for name, widths in (("center", (1,)), ("indent", (1,)), ("wordwrap", (2,)), ("join", ())):
        env.filters[name] = _checked_filter(env.filters[name], *widths)
    env.filters["replace"] = _checked_replace
    env.filters["format"] = _checked_filter(_format_checked)
    env.globals["lipsum"] = _checked_filter(env.globals["lipsum"], 0, 2, 3)
    return env


def _format_checked(value: str, *args, **kwargs) -> str:
    _checked_format(str(value))
    return _FORMAT(value, *args, **kwargs)


_timing = threading.local()  # whether this thread's deadline is set (a render inside a render keeps it)


@contextmanager
def _deadline() -> Iterator[None]:
    """Raise _Limit in the block once it has run TEMPLATE_SECONDS: a timer signal, in the main
    thread (validate's and its workers'; where signals cannot be had, a library caller's thread,
    the template runs without one, under the other limits)."""
    seconds = TEMPLATE_SECONDS
    if getattr(_timing, "set", False) or not hasattr(signal, "setitimer") \
            or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise _Limit(f"it ran for more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    _timing.set = True
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:  # (run even when the timer goes off on the way here)
            signal.signal(signal.SIGALRM, previous)
            _timing.set = False


@lru_cache(maxsize=4096)
def _compiled(text: str):
    return _environment().from_string(text)


def _compiled_within_limits(text: str):
    """The compiled template; TemplateSyntaxError for its syntax, _Limit for a template too big,
    too deep or too slow to read (Python's parser and compiler have limits of their own)."""
    _planned_size(len(text))
    try:
        return _compiled(text)
    except (RecursionError, MemoryError):
        raise _Limit("it nests deeper than chatconv reads") from None
    except SyntaxError as exc:  # Python's, of the code made of it: "too many statically nested blocks"
        if isinstance(exc, TemplateSyntaxError):
            raise
        raise _Limit(f"it nests deeper than Python compiles ({exc.msg})") from None


def check_syntax(text: str) -> None:
    """Raise TemplateProblem when `text` is not a template Jinja2 can read, or is past a limit."""
    try:
        with _deadline():
            _compiled_within_limits(text)
    except TemplateSyntaxError as exc:
        raise _syntax_problem(exc) from None
    except _Limit as exc:
        raise _limit_problem(exc) from None


def _rendered(text: str, context: dict) -> str:
    """The template's output, within the output limit as it is made (a loop writes it bit by bit)."""
    pieces, size = [], 0
    for piece in _compiled_within_limits(text).generate(context):
        size += len(piece)
        _planned_size(size)
        pieces.append(piece)
    return "".join(pieces)


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
        with _deadline():
            return _rendered(text, {**variables, "vars": variables})
    except TemplateSyntaxError as exc:
        raise _syntax_problem(exc) from None
    except _Limit as exc:
        raise _limit_problem(exc) from None
    except RecursionError:  # a macro that calls itself without end
        raise _limit_problem(_Limit("it calls itself deeper than Python allows")) from None
    except _Embedded as exc:
        raise TemplateProblem(
            f"{'a list' if str(exc) == 'list' else 'an object'} written into text (Nunjucks would print "
            "it as '[object Object]' or 'a,b')", "write the var alone as '{{ name }}' to use its value, "
            "or pick a field of it ({{ name.field }}), or `| dump` it as JSON", "unsupported") from None
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
