"""The limits a template runs under (templates.py renders it): a template is a program the eval
file's author wrote, run on the user's machine, so that none may hang a run, end it in a
traceback or take gigabytes.

- Time: TEMPLATE_SECONDS for each case's rendering (a timer signal, `deadline()`).
- Size: every string or list a template makes, and its output, within --max-file-bytes, refused
  before it is made where Python would make it at once (`'a' * 10**10`, `center(10**9)`,
  `'%0999999999d' % 1`, `x ~ x` doubled in a loop).
- Integers: within INTEGER_BITS (Python writes no more than 4,300 digits; it raises).
Past one, TemplateLimit says which.
"""

from __future__ import annotations

import re
import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator

from jinja2 import pass_eval_context
from jinja2.compiler import CodeGenerator
from jinja2.filters import do_format, do_replace
from jinja2.sandbox import SandboxedEnvironment

from ..limits import LIMITS, size_text

TEMPLATE_SECONDS = 2.0  # to read and render a case's templates (a loop of loops would run for hours)
INTEGER_BITS = 14_000  # about the 4,300 digits Python writes an integer with (no more: it raises)


class TemplateLimit(Exception):
    """A template past one of its limits, said as the message."""


def planned_size(size: int) -> None:
    """Refuse, before it is made, a value of `size` characters or items past the output limit."""
    if size > LIMITS.max_file_bytes:
        raise TemplateLimit(f"a value of {size:,} characters or items would be made "
                            f"(--max-file-bytes: {size_text(LIMITS.max_file_bytes)})")


def sized(value: Any) -> Any:
    """`value`, when a string or a list it is within the output limit."""
    if isinstance(value, (str, list)):
        planned_size(len(value))
    return value


def planned_bits(bits: int) -> None:
    """Refuse, before it is made, an integer of `bits` bits past INTEGER_BITS."""
    if bits > INTEGER_BITS:
        raise TemplateLimit(f"an integer of more than {INTEGER_BITS:,} bits would be made")


def checked_integer(value: Any) -> Any:
    """`value`, when an integer one of at most INTEGER_BITS."""
    if type(value) is int:
        planned_bits(value.bit_length())
    return value


_WIDTH = re.compile(r"%[-+ #0]*(\d*)(?:\.(\d+))?")


def _checked_format(text: str) -> None:
    """Refuse a %-format whose widths would make a value past the output limit ('%0999999999d')."""
    for width, precision in _WIDTH.findall(text):
        planned_size(max(int(width or 0), int(precision or 0)))


class _LimitedCode(CodeGenerator):
    """The code of a template whose `~` joins through LimitedEnvironment.joined (Jinja2's own join
    cannot be intercepted)."""

    def visit_Concat(self, node, frame) -> None:
        self.write("environment.joined((")
        for argument in node.nodes:
            self.visit(argument, frame)
            self.write(", ")
        self.write("))")


class LimitedEnvironment(SandboxedEnvironment):
    """Jinja2's sandbox, whose operators, joins and sizing filters refuse what would pass the
    limits before they make it."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})
    code_generator_class = _LimitedCode

    def __init__(self, **options):
        super().__init__(**options)
        for name, widths in (("center", (1,)), ("indent", (1,)), ("wordwrap", (2,)), ("join", ())):
            self.filters[name] = _checked_filter(self.filters[name], *widths)
        self.filters["replace"] = _checked_replace
        self.filters["format"] = _checked_filter(_checked_do_format)

    def call_binop(self, context, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name == "*":
            for value, times in ((left, right), (right, left)):
                if isinstance(value, (str, list)) and type(times) is int:
                    planned_size(len(value) * times)
            if type(left) is int and type(right) is int:
                planned_bits(left.bit_length() + right.bit_length())
        elif operator_name == "**" and type(left) is int and type(right) is int and right > 0 and abs(left) > 1:
            planned_bits(right * left.bit_length())
        elif operator_name == "%" and isinstance(left, str):
            _checked_format(left)
        elif operator_name == "+" and isinstance(left, (str, list)) and isinstance(right, (str, list)):
            planned_size(len(left) + len(right))
        return sized(super().call_binop(context, operator_name, left, right))

    def joined(self, values: tuple) -> str:
        """`a ~ b`: the strings joined, within the output limit."""
        texts = [str(value) for value in values]
        planned_size(sum(map(len, texts)))
        return "".join(texts)


def _checked_filter(function, *width_arguments: int):
    """A filter whose width arguments (by position, after the value) and result stay within the
    output limit: `center(10**9)`, `indent(10**9)`."""
    def checked(*args, **kwargs):
        for position in width_arguments:
            if len(args) > position and type(args[position]) is int:
                planned_size(args[position])
        for value in kwargs.values():
            if type(value) is int:
                planned_size(value)
        return sized(function(*args, **kwargs))
    if hasattr(function, "jinja_pass_arg"):  # the environment or context Jinja2 passes it first
        checked.jinja_pass_arg = function.jinja_pass_arg
    return checked


@pass_eval_context
def _checked_replace(context, text, old, new, count=None):
    text, old, new = str(text), str(old), str(new)
    found = text.count(old) if old else len(text) + 1
    planned_size(len(text) + min(found, count if type(count) is int and count >= 0 else found) * len(new))
    return do_replace(context, text, old, new, count)


def _checked_do_format(value: str, *args, **kwargs) -> str:
    _checked_format(str(value))
    return do_format(value, *args, **kwargs)


def rendered(template, context: dict) -> str:
    """The template's output, within the output limit as it is made (a loop writes it bit by bit)."""
    pieces, size = [], 0
    for piece in template.generate(context):
        size += len(piece)
        planned_size(size)
        pieces.append(piece)
    return "".join(pieces)


_armed = False  # whether the main thread's deadline is set (what renders inside it keeps it)


@contextmanager
def deadline() -> Iterator[None]:
    """Raise TemplateLimit in the block once it has run TEMPLATE_SECONDS: a timer signal, in the
    main thread (validate's and its workers'; a library caller's other thread renders without
    one, under the other limits). Set once for a case: a render inside it keeps its deadline
    (and costs no system calls: setting one is half the time of a small template's render)."""
    global _armed
    if _armed or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    seconds = TEMPLATE_SECONDS

    def expired(signum, frame):
        raise TemplateLimit(f"it ran for more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    _armed = True
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:  # (run even when the timer goes off on the way here)
            signal.signal(signal.SIGALRM, previous)
            _armed = False
