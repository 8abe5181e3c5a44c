"""Messages written as flattened span attributes, before the GenAI conventions' message JSON:
OpenInference's `llm.input_messages.N.message.*` / `llm.output_messages.N.message.*` (Phoenix,
Arize) and the deprecated GenAI `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` (OpenLLMetry,
Langtrace), or `gen_ai.prompt` / `gen_ai.completion` as JSON text. Each is put in the form of
gen_ai.input.messages and gen_ai.output.messages (OTel messages of parts), which the span
readers then read as any other; the attributes consumed are not the conversation's metadata.
"""

from __future__ import annotations

from typing import Any

import orjson

from .otlp import INPUT, OUTPUT

OPENINFERENCE = ("llm.input_messages.", "llm.output_messages.")
DEPRECATED = ("gen_ai.prompt.", "gen_ai.completion.")
PROMPT, COMPLETION = "gen_ai.prompt", "gen_ai.completion"  # the same, as JSON text


def is_openinference(attributes: dict) -> bool:
    return "openinference.span.kind" in attributes or any(key.startswith(OPENINFERENCE) for key in attributes)


def has_flattened(attributes: dict) -> bool:
    return any(key.startswith(OPENINFERENCE + DEPRECATED) or key in (PROMPT, COMPLETION) for key in attributes)


def message_values(attributes: dict, given: Any = ()) -> tuple[dict[str, tuple[Any, str]], set[str]]:
    """The OTel messages of flattened attributes, by gen_ai.input.messages / output.messages (but
    those `given` as the conventions write them), each with the first attribute it came from
    (where a problem is said); and the attributes read."""
    values: dict[str, tuple[Any, str]] = {key: (None, "") for key in given}
    consumed: set[str] = set()
    for key, prefix in ((INPUT, OPENINFERENCE[0]), (OUTPUT, OPENINFERENCE[1]), (INPUT, DEPRECATED[0]),
                        (OUTPUT, DEPRECATED[1])):
        if key in values:
            continue
        # a message's field (N.role, N.message.content, ...): an attribute of an index alone is no message
        found = {name: value for name, value in attributes.items() if name.startswith(prefix)
                 and "." in name[len(prefix):]}
        if found:
            values[key] = (_messages(found, prefix, key == OUTPUT), next(iter(found)))
            consumed |= set(found)
    for key, name in ((INPUT, PROMPT), (OUTPUT, COMPLETION)):
        if key not in values and name in attributes:
            values[key] = (_json_messages(attributes[name], key == OUTPUT), name)
            consumed.add(name)
    return {key: value for key, value in values.items() if key not in given}, consumed


def _messages(found: dict[str, Any], prefix: str, output: bool) -> list[dict]:
    """The OTel messages of one prefix's attributes, by their index (gaps allowed, in order)."""
    tree: dict = {}
    for name, value in found.items():
        path = name[len(prefix):].split(".")
        if path[1:2] == ["message"]:  # OpenInference writes each message's fields under `message.`
            path = [path[0], *path[2:]]
        node = tree
        for step in path[:-1]:
            node = node.setdefault(step, {})
            if not isinstance(node, dict):  # a value and fields under one name: the value stays
                break
        else:
            node[path[-1]] = value
    return [_message(tree[index], output) for index in sorted(tree, key=_order)]


def _order(index: str) -> tuple:
    return (0, int(index), "") if index.isdigit() else (1, 0, index)


def _message(fields: dict, output: bool) -> dict:
    role = fields.get("role", "assistant" if output else "user")
    parts: list[dict] = []
    content = fields.get("content")
    if role == "tool" and content is not None:
        parts.append({"type": "tool_call_response", "id": fields.get("tool_call_id"), "response": content})
    elif content is not None:
        parts.append({"type": "text", "content": content})
    contents = fields.get("contents") if isinstance(fields.get("contents"), dict) else {}
    for _, item in sorted(contents.items(), key=lambda kv: _order(kv[0])):
        inner = item.get("message_content", item) if isinstance(item, dict) else {"value": item}
        image = inner.get("image") if isinstance(inner.get("image"), dict) else {}
        url = image.get("image", {}).get("url") if isinstance(image.get("image"), dict) else None
        if inner.get("type") == "image" and isinstance(url, str) and set(inner) == {"type", "image"}:
            parts.append({"type": "uri", "modality": "image", "uri": url})
        elif inner.get("type") == "text" and isinstance(inner.get("text"), str) and set(inner) == {"type", "text"}:
            parts.append({"type": "text", "content": inner["text"]})
        else:  # anything else (audio, a field of its own) has no model part: kept whole, said, by the reader
            parts.append(inner if isinstance(inner.get("type"), str) else {"type": "content", **inner})
    calls = fields.get("tool_calls") if isinstance(fields.get("tool_calls"), dict) else {}
    for _, item in sorted(calls.items(), key=lambda kv: _order(kv[0])):
        call = item.get("tool_call", item) if isinstance(item, dict) else {}
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        parts.append({"type": "tool_call", "id": call.get("id"), "name": function.get("name"),
                      "arguments": _parsed(function.get("arguments"))})
    known = ("role", "content") + (("contents",) if isinstance(fields.get("contents"), dict) else ()) + (
        ("tool_calls",) if isinstance(fields.get("tool_calls"), dict) else ()) + (("tool_call_id",) if role == "tool" else ())
    return {"role": role, "parts": parts, **{k: v for k, v in fields.items() if k not in known}}


def _parsed(arguments: Any) -> Any:
    """A call's arguments: the value of their JSON text (as OTel messages hold them), else as written."""
    if isinstance(arguments, str):
        try:
            return orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return arguments
    return arguments


def _json_messages(value: Any, output: bool) -> Any:
    """gen_ai.prompt as the JSON text of OTel messages; gen_ai.completion as that of a list of them,
    or of one `{text, finish_reason}` answer."""
    parsed = _parsed(value)
    if output and isinstance(parsed, dict) and "text" in parsed:
        answer = {"role": "assistant", "parts": [{"type": "text", "content": parsed["text"]}],
                  "finish_reason": parsed.get("finish_reason", "stop")}
        return [{**answer, **{k: v for k, v in parsed.items() if k not in ("text", "finish_reason")}}]
    return parsed
