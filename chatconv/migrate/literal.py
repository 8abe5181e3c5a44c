"""Text that must stay literal where AgentV's current era renders it as a Nunjucks template (a
prompt, a var, a case's criteria): escaped so that it renders to itself. For migration 0006.
"""

from __future__ import annotations

import re
from typing import Any, Iterator


TEMPLATE_SYNTAX = re.compile(r"\{[{%#]")  # what Nunjucks (and Jinja2, which renders it here) reads as its own


def strings(value: Any, path: tuple) -> Iterator[tuple[tuple, str]]:
    """(JSON path, text) of every string in a value, in file order (a refusal names the first)."""
    stack = [(path, value)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            yield where, value
        elif isinstance(value, dict):  # pushed in reverse, so that the first item is popped first
            stack.extend(reversed([(where + (key,), item) for key, item in value.items()]))
        elif isinstance(value, list):
            stack.extend(reversed([(where + (index,), item) for index, item in enumerate(value)]))


def escaped(text: Any) -> Any:
    """Text that renders to itself; other values as they are. Wrapped in `{% raw %}` (readable),
    unless it holds `endraw`, which a raw block cannot: then each `{` that opens template
    syntax is written `{{ "{" }}`, which renders as `{` (in Nunjucks as in Jinja2)."""
    if not isinstance(text, str) or not TEMPLATE_SYNTAX.search(text):
        return text
    if "endraw" in text:
        return _OPENING_BRACE.sub('{{ "{" }}', text)
    return "{% raw %}" + text + "{% endraw %}"


_OPENING_BRACE = re.compile(r"\{(?=[{%#])")  # a `{` that, with the next character, opens template syntax


def escaped_texts(value: Any) -> Any:
    """`value` (text, messages, segments) with each text escaped, in place; a text that needs
    no escape is left as it is (its YAML quoting style with it)."""
    if isinstance(value, str):
        return escaped(value)
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in list(items):
        done = escaped_texts(item)
        if done is not item:
            value[key] = done
    return value
