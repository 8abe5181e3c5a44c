"""Text that must stay literal where AgentV's current era renders it as a Nunjucks template (a
prompt, a var, a case's criteria): escaped with `{% raw %}`, or refused where it cannot be. For
migration 0006.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from .edits import refusal

TEMPLATE_SYNTAX = re.compile(r"\{[{%#]")  # what Nunjucks (and Jinja2, which renders it here) reads as its own


def strings(value: Any, path: tuple) -> Iterator[tuple[tuple, str]]:
    """(JSON path, text) of every string in a value."""
    stack = [(path, value)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            yield where, value
        elif isinstance(value, dict):
            stack.extend((where + (key,), item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((where + (index,), item) for index, item in enumerate(value))


def escaped(text: Any, path: tuple = ()) -> Any:
    """Text that renders to itself; other values as they are. Refused for text holding both
    template syntax and `endraw` (a raw block cannot hold it)."""
    if not isinstance(text, str) or not TEMPLATE_SYNTAX.search(text):
        return text
    if "endraw" in text:
        raise refusal(path, "text with template syntax ({{, {%, {#) and 'endraw' cannot be kept literal in a "
                      "template: rewrite it, then migrate")
    return "{% raw %}" + text + "{% endraw %}"


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
