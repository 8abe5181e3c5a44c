"""Gemini generateContent: request bodies (`contents`, `system_instruction`), bare `contents`
lists and responses (`candidates`).

Read: roles user, model (assistant) and the early function role; parts text (thought: reasoning),
inline_data, file_data, functionCall, functionResponse, executableCode and codeExecutionResult.
A user turn holding functionResponse parts becomes a tool message (and a user message for its
other parts, in order). The REST API takes camelCase and snake_case: the spelling read is kept,
and export writes it back (gemini_body.py). Every other field stays under providerOptions.gemini
of the message or part it was on; the body's own fields (tools, toolConfig, generationConfig,
safetySettings, cachedContent, ...) become the conversation's metadata.
"""

from __future__ import annotations

from typing import Any, Iterator

from ...messages import typed_tool_output
from ...providers.rules import media
from .body import MARKS, NAME, SPELLINGS, TARGET, write
from ..reading import Imported, Reading, free_of_marks, rest_of, tool_input

ROLES = {"user": "user", "model": "assistant", "function": "tool"}
DATA = ("text", "inline_data", "file_data", "functionCall", "functionResponse", "executableCode", "codeExecutionResult")
SYSTEM_KEYS = ("system_instruction", "systemInstruction")
ALLOWED = {"model": set(DATA) - {"functionResponse"}, "user": {"text", "inline_data", "file_data", "functionResponse"},
           "function": {"functionResponse"}}
CODE_TOOL = "code_execution"  # the name the AI SDK gives Gemini's own code execution

__all__ = ["NAME", "TARGET", "detect", "read", "write"]


KEYS = frozenset({"candidates", "contents", "promptFeedback"})


def detect(data: Any) -> bool:
    """A `contents` list, a request body holding one, or a response (`candidates`)."""
    if isinstance(data, list):
        return _is_contents(data)
    if not isinstance(data, dict):
        return False
    if "candidates" in data:
        candidates = data["candidates"]
        # none at all: a response all the same when it says it is one (blocked, or a usage record)
        return isinstance(candidates, list) and (bool(candidates) or not {"promptFeedback", "responseId",
                                                                          "usageMetadata"}.isdisjoint(data)) and all(
            isinstance(c, dict) and ("content" in c or "finishReason" in c) for c in candidates)
    if isinstance(data.get("promptFeedback"), dict):  # a response to a blocked prompt: no candidates
        return True
    return _is_contents(data.get("contents"), any_role=True)


def is_response(data: dict) -> bool:
    """Whether an object this format reads is a response (not a request body)."""
    return "candidates" in data or "promptFeedback" in data


def _is_contents(contents: Any, any_role: bool = False) -> bool:
    """Turns of Gemini's roles; with `any_role` (a body's `contents`, which no other API has) a
    role that is not a string too, which no API writes: the reader says where it is."""
    return isinstance(contents, list) and bool(contents) and all(
        isinstance(c, dict) and isinstance(c.get("parts"), list) and (
            c.get("role", "user") in ROLES if isinstance(c.get("role", "user"), str) else any_role) for c in contents)


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    if isinstance(data, list):
        messages, paths = _contents([((i,), c) for i, c in enumerate(data)], reading)
        yield Imported(None, messages, {}, paths)
        return
    if "candidates" in data:
        yield from _candidates(data, reading)
        return
    if "promptFeedback" in data and "contents" not in data:  # a blocked prompt's response: no answer to read
        reading.warn(("promptFeedback",), "a response with no candidate (the prompt was blocked): no answer to import",
                     code="import-empty")
        return
    if not isinstance(data.get("contents"), list):
        reading.error(("contents",), "a Gemini request body needs `contents`, a list of turns", code="missing-key")
        return
    keys = [key for key in SYSTEM_KEYS if key in data]
    if len(keys) > 1:
        reading.error((keys[1],), "the system instruction is written twice (system_instruction and systemInstruction)",
                      code="duplicate-key")
        return
    metadata = rest_of(data, ("contents", *keys))
    system = _system(data[keys[0]], keys[0], reading) if keys else []
    if system is None:  # not text parts: the body's own field, as it is
        metadata[keys[0]] = data[keys[0]]
        system = []
    messages, paths = _contents([(("contents", i), c) for i, c in enumerate(data["contents"])], reading)
    yield Imported(None, system + messages, metadata, [(keys[0],) for _ in system] + paths)


def _candidates(data: dict, reading: Reading) -> Iterator[Imported]:
    """Each candidate a conversation of its own, named after the response (`#index` beyond the first)."""
    response = rest_of(data, ("candidates",))
    candidates = data["candidates"] if isinstance(data["candidates"], list) else []
    for index, candidate in enumerate(candidates):
        messages, paths = [], []
        if isinstance(candidate, dict) and "content" in candidate:
            messages, paths = _contents([(("candidates", index, "content"), candidate["content"])], reading, "model")
        elif not isinstance(candidate, dict):
            reading.error(("candidates", index), "a candidate must be an object", code="wrong-type")
        if messages:
            reading.keep(messages[0], {"candidate": rest_of(candidate, ("content",)) or None,
                                       "response": response or None})
        conversation_id = data.get("responseId") if isinstance(data.get("responseId"), str) else None
        if conversation_id is not None and index:
            conversation_id = f"{conversation_id}#{index}"
        yield Imported(conversation_id, messages, {}, paths)


def _system(instruction: Any, key: str, reading: Reading) -> list[dict] | None:
    """One system message holding the text parts joined by newlines (each part's length kept to
    write them back apart); None for an instruction that is not text parts."""
    parts = instruction.get("parts") if isinstance(instruction, dict) else None
    if not (isinstance(parts, list) and parts and all(isinstance(p, dict) and isinstance(p.get("text"), str)
                                                      for p in parts)):
        reading.warn((key,), "a system instruction that is not a list of text parts: kept as the body's field",
                     "it is written back as it is, but chatconv sees no system message in it")
        return None
    extras = [rest_of(p, ("text",)) for p in parts]
    message = {"role": "system", "content": "\n".join(p["text"] for p in parts)}
    return [reading.keep(message, {"key": key if key != "system_instruction" else None,
                                   "instruction": rest_of(instruction, ("parts",)) or None,
                                   "lengths": [len(p["text"]) for p in parts] if len(parts) > 1 else None,
                                   "parts": extras if any(extras) else None})]


def _spelled(item: dict) -> tuple[dict, dict]:
    """`item` with the fields chatconv reads under the names it writes, and the names it had
    (written name -> name read) where they differ; ({}, {}) when a field is written both ways."""
    out, spelled = {}, {}
    for key, value in item.items():
        name = SPELLINGS.get(key, key)
        if name in out:
            return {}, {}
        out[name] = value
        if name != key:
            spelled[name] = key
    return out, spelled


class _Turns:
    """What pairing needs across a conversation's turns: the calls not answered yet, by name."""

    def __init__(self) -> None:
        self.pending: dict[str, list[str]] = {}  # function name -> ids of its unanswered calls, oldest first
        self.code: list[str] = []  # ids of the executableCode parts of the turn being read


def _contents(contents: list[tuple[tuple, Any]], reading: Reading, default_role: str = "user") -> tuple[list[dict], list[tuple]]:
    """The model messages of turns ((path, content) each), and each one's path."""
    messages, paths, turns, last_role = [], [], _Turns(), None
    for path, content in contents:
        role = content.get("role", default_role) if isinstance(content, dict) else None
        if isinstance(content, dict) and not isinstance(role, str):  # a list is no key of ROLES: a TypeError
            reading.error(path + ("role",), "a Gemini turn's role is a string: user or model", code="wrong-type")
            continue
        if role not in ROLES or not isinstance(content.get("parts", []), list):
            reading.error(path, "a Gemini turn is {role: user or model, parts: [...]}", code="wrong-type")
            continue
        if not free_of_marks(content, MARKS, ("role", "parts"), reading, path):
            return [], []
        groups: list[tuple[str, list[dict]]] = []
        turns.code = []
        for index, part in enumerate(content.get("parts", [])):
            converted = _part(part, role, reading, path + ("parts", index), turns)
            if converted is None:
                return [], []
            message_role = "tool" if role != "model" and converted["type"] == "tool-result" else ROLES[role]
            if groups and groups[-1][0] == message_role:
                groups[-1][1].append(converted)
            else:
                groups.append((message_role, [converted]))
        wire = "model" if role == "model" else "user"
        marks = {"role": role if role == "function" else None, "noRole": True if "role" not in content else None,
                 "noParts": True if "parts" not in content else None, "newTurn": True if wire == last_role else None}
        for number, (message_role, parts) in enumerate(groups or [(ROLES[role], [])]):
            message = {"role": message_role, "content": parts}
            # the turn's own fields as they are, nulls too (keep skips a None mark, not a field)
            messages.append(reading.keep(message, marks, rest_of(content, ("role", "parts"))) if number == 0 else message)
            paths.append(path)
        last_role = wire
    return messages, paths


def _part(part: Any, role: str, reading: Reading, path: tuple, turns: _Turns) -> dict | None:
    named, spelled = _spelled(part) if isinstance(part, dict) else ({}, {})
    kinds = [key for key in DATA if key in named]
    if len(kinds) != 1:
        found = ", ".join(part) if isinstance(part, dict) and part else "nothing"
        reading.error(path, f"a Gemini part holds exactly one of {', '.join(DATA)} (this one: {found})",
                      "write each part as the API does, e.g. {\"text\": ...} or {\"functionCall\": {...}}",
                      code="wrong-type")
        return None
    kind = kinds[0]
    if kind not in ALLOWED[role]:
        reading.error(path, f"a {kind} part in a {role} turn",
                      "only the model calls functions and runs code; functionResponse parts answer it from a "
                      "user turn", code="wrong-type")
        return None
    inner = named[kind]
    if not free_of_marks(part, MARKS, (), reading, path):  # no mark has a second spelling: the keys as written
        return None
    if kind == "text":
        thought = named.get("thought") is True and role == "model"  # reasoning is the model's only
        rest = rest_of(named, ("text", "thought") if thought else ("text",))
        if not isinstance(inner, str):
            reading.error(path + ("text",), "text must be a string", code="wrong-type")
            return None
        return reading.keep({"type": "reasoning" if thought else "text", "text": inner}, {}, rest)
    inner_named, inner_spelled = _spelled(inner) if isinstance(inner, dict) else ({}, {})
    if kind in ("executableCode", "codeExecutionResult"):
        inner_named = inner  # the whole object is the call's input or the result's output
    if not isinstance(inner, dict) or (not inner_named and inner):
        reading.error(path + (spelled.get(kind, kind),), f"{kind} must be an object, each field written once",
                      code="wrong-type")
        return None
    marks = {"spelled": {**spelled, **inner_spelled} or None}
    rest = rest_of(named, (kind,))
    where = path + (spelled.get(kind, kind),)
    converted = _CONVERT[kind](inner_named, role, reading, where, turns, marks)
    return None if converted is None else reading.keep(converted, marks, rest)


def _media(inner: dict, role: str, reading: Reading, where: tuple, turns: _Turns, marks: dict) -> dict | None:
    uri = "file_uri" in inner
    data, mime = inner.get("file_uri" if uri else "data"), inner.get("mime_type")
    if not isinstance(data, str) or not isinstance(mime, (str, type(None))):
        reading.error(where, "file_data needs file_uri, inline_data needs data (strings), mime_type a string",
                      code="wrong-type")
        return None
    image = role == "user" and isinstance(mime, str) and mime.startswith("image/")  # the model's own images are files
    part = ({"type": "image", "image": data, "mediaType": mime} if image
            else {"type": "file", "data": data, "mediaType": mime or "application/octet-stream"})
    how = "file_data" if uri else "inline_data"
    marks.update({"noMimeType": True if mime is None else None,
                  "as": how if (media(part)[2] != uri or data.startswith("data:")) else None,
                  "inner": rest_of(inner, ("file_uri" if uri else "data", "mime_type")) or None})
    return part


def _call(inner: dict, role: str, reading: Reading, where: tuple, turns: _Turns, marks: dict) -> dict | None:
    name, call_id = inner.get("name"), inner.get("id")
    if not isinstance(name, str) or not name or not isinstance(call_id, (str, type(None))) or call_id == "":
        reading.error(where, "a functionCall needs its name (and an id, if any, that is a string)", code="wrong-type")
        return None
    if call_id is None:  # the API leaves ids out: one that says where the call was, written back without it
        call_id = f"{name}-" + "-".join(str(p) for p in reading.record.prefix + where[:-1])
    turns.pending.setdefault(name, []).append(call_id)
    value, keep = tool_input(inner.get("args", {}), reading, where + ("args",))
    marks.update({"noId": True if "id" not in inner else None, "noArgs": True if "args" not in inner else None,
                  "argsText": True if isinstance(inner.get("args"), str) else None, **keep,
                  "inner": rest_of(inner, ("id", "name", "args")) or None})
    return {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": value}


def _response(inner: dict, role: str, reading: Reading, where: tuple, turns: _Turns, marks: dict) -> dict | None:
    name, call_id = inner.get("name"), inner.get("id")
    if not isinstance(name, str) or not name or "response" not in inner or not isinstance(call_id, (str, type(None))):
        reading.error(where, "a functionResponse needs the function's name and its response", code="missing-key")
        return None
    pending = turns.pending.get(name, [])
    if call_id is None:  # no id: it answers the oldest call of that name not answered yet
        if not pending:
            reading.error(where, f"a functionResponse for {name!r} answers no earlier functionCall of that name",
                          "a functionResponse follows the model turn that called the function", code="tool-result-orphan")
            return None
        call_id = pending.pop(0)
    elif call_id in pending:
        pending.remove(call_id)
    response = inner["response"]
    # The API's convention: an "error" key (and no "output") says the function failed.
    failed = isinstance(response, dict) and "error" in response and "output" not in response
    marks.update({"noId": True if "id" not in inner else None, "bare": True if not isinstance(response, dict) else None,
                  "inner": rest_of(inner, ("id", "name", "response")) or None})
    return {"type": "tool-result", "toolCallId": call_id, "toolName": name,
            "output": typed_tool_output(response, failed)}


def _code(inner: dict, role: str, reading: Reading, where: tuple, turns: _Turns, marks: dict) -> dict:
    call_id = "executableCode-" + "-".join(str(p) for p in reading.record.prefix + where[:-1])
    turns.code.append(call_id)
    return {"type": "tool-call", "toolCallId": call_id, "toolName": CODE_TOOL, "input": inner, "providerExecuted": True}


def _code_result(inner: dict, role: str, reading: Reading, where: tuple, turns: _Turns, marks: dict) -> dict | None:
    if not turns.code:
        reading.error(where, "a codeExecutionResult with no executableCode before it in its turn",
                      "the model's turn holds the code it ran, then its result", code="tool-result-orphan")
        return None
    failed = inner.get("outcome", "OUTCOME_OK") != "OUTCOME_OK"
    return {"type": "tool-result", "toolCallId": turns.code.pop(0), "toolName": CODE_TOOL,
            "output": typed_tool_output(inner, failed)}


_CONVERT = {"inline_data": _media, "file_data": _media, "functionCall": _call, "functionResponse": _response,
            "executableCode": _code, "codeExecutionResult": _code_result}
