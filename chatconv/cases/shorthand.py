"""The message shorthand of the tests era (AgentV's shorthand-expansion and message-processor),
which the current era uses too for what its prompts render to and for raw external cases.

Messages come out in the internal shape: `{role, content}`, content a string or a list of
`{type: text|file, value}` segments. Each message goes with its *place*: the JSON path of its
content, or, when chatconv built the content (from `input_files`, or by leaving out segments
AgentV skips), the path of each segment.
"""

from __future__ import annotations

import json
from typing import Any

ROLES = ("system", "user", "assistant", "tool")


def as_json_text(value: Any) -> str:
    """An object or list as AgentV writes it into text: JSON.stringify(value, null, 2)."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def compact_json(value: Any) -> str:
    """A value as JSON.stringify(value) writes it: no spaces, characters as they are."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def is_message(value: Any) -> bool:
    return isinstance(value, dict) and value.get("role") in ROLES and "content" in value


def content_and_place(content: Any, where: tuple) -> tuple[Any, tuple | list]:
    """A message's content in the internal shape, and its place: a string as it is; an object as
    its JSON text; a list keeps its text and file segments (AgentV skips what is not an object)."""
    if isinstance(content, str):
        return content, where
    if isinstance(content, dict):
        return as_json_text(content), where
    if not isinstance(content, list):
        return "" if content is None else str(content), where
    kept, places = [], []
    for index, segment in enumerate(content):
        if isinstance(segment, str):
            kept.append({"type": "text", "value": segment})
        elif (isinstance(segment, dict) and segment.get("type") in ("text", "file")
              and isinstance(segment.get("value"), str)):
            kept.append({"type": segment["type"], "value": segment["value"]})
        else:
            continue
        places.append(where + (index, "value"))
    if len(kept) == len(content):
        return kept, where
    return kept, places


def message_at(message: dict, where: tuple) -> tuple[dict, tuple | list]:
    content, place = content_and_place(message.get("content"), where + ("content",))
    return {"role": message["role"], "content": content}, place


def expand_input(value: Any, where: tuple) -> list[tuple[dict, tuple | list]]:
    """`input` as messages: a string is one user message; a message object is itself; another
    object is one user message holding its JSON text; a list keeps its valid messages."""
    if isinstance(value, str):
        return [({"role": "user", "content": value}, where)]
    if isinstance(value, dict):
        if "role" in value:
            return [message_at(value, where)] if is_message(value) else []
        return [({"role": "user", "content": as_json_text(value)}, where)]
    if isinstance(value, list):
        return [message_at(item, where + (index,)) for index, item in enumerate(value) if is_message(item)]
    return []


def json_messages(text: str) -> list | None:
    """A rendered input that is a JSON list of messages as current AgentV reads it: the
    messages (every item one, and at least one), else None (the text is the user's)."""
    stripped = text.strip()
    if not stripped.startswith("["):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    if isinstance(value, list) and value and all(is_message(item) for item in value):
        return value
    return None


def with_input_files(text: str, text_where: tuple, files: list, files_where: tuple) -> tuple[dict, list]:
    """A string `input` with `input_files`: one user message, the files first, then the text."""
    content, places = [], []
    for index, value in enumerate(files):
        if isinstance(value, str) and value:
            content.append({"type": "file", "value": value})
            places.append(files_where + (index,))
    content.append({"type": "text", "value": text})
    places.append(text_where)
    return {"role": "user", "content": content}, places


def expected_messages(value: Any, where: tuple) -> list[tuple[dict, tuple | list]]:
    """`expected_output` (written at `where`) as messages with their places: a string or an
    object is one assistant message (an object's content as JSON text); a list of messages as
    they are; another list as JSON text."""
    if value is None:
        return []
    if isinstance(value, dict) and "role" in value:
        return [message_at(value, where)] if is_message(value) else []
    if isinstance(value, list) and value and isinstance(value[0], dict) and "role" in value[0]:
        return [message_at(item, where + (index,)) for index, item in enumerate(value) if is_message(item)]
    content = value if isinstance(value, str) else as_json_text(value)
    return [({"role": "assistant", "content": content}, where)]
