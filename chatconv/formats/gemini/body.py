"""Gemini generateContent request bodies written from model messages (the `gemini` format's export).

What import kept (providerOptions["gemini"], the body's fields in metadata) is read back, so
that a body read and written again is the same JSON value; messages from other formats are
written in the spellings chatconv's Gemini renderer uses (system_instruction, inline_data,
file_data, functionCall, functionResponse).
"""

from __future__ import annotations

from typing import Any

from ...providers.gemini import is_code_execution
from ...providers.rules import is_base64, media, message_parts_of
from ..reading import kept

NAME = "gemini"
TARGET = "gemini"

# The REST API takes every field in camelCase and in snake_case. The fields chatconv reads, by
# the spelling it writes -> the other one; a part keeps ("spelled") the ones it wrote otherwise.
SPELLINGS = {"systemInstruction": "system_instruction", "inlineData": "inline_data", "fileData": "file_data",
             "mimeType": "mime_type", "fileUri": "file_uri", "function_call": "functionCall",
             "function_response": "functionResponse", "executable_code": "executableCode",
             "code_execution_result": "codeExecutionResult"}
WIRE_ROLES = {"user": "user", "tool": "user", "assistant": "model"}

# What import kept to write a body back, as opposed to the source's own fields kept as they were.
MARKS = ("spelled", "inner", "noId", "noArgs", "argsText", "rawArguments", "arguments", "bare", "noMimeType", "as", "role",
         "noRole", "noParts", "newTurn", "key", "instruction", "lengths", "parts", "candidate", "response")


def write(messages: list[dict], metadata: dict, gather_tools: bool = False, notes: list | None = None) -> dict:
    """A generateContent request body: the system instruction, `contents`, then what import kept
    of the body; with `gather_tools`, `tools` declaring the called functions when it had none.

    What Gemini has no place for is left out (or written in the form it takes), each noted in
    `notes` as (message index, problem code, what): another provider's server tools (no
    executableCode of Gemini's), inline data that is not base64 (a file id, a path)."""
    notes = notes if notes is not None else []
    system = []
    while len(system) < len(messages) and messages[len(system)]["role"] == "system":
        system.append(messages[len(system)])
    body: dict[str, Any] = {}
    if system:
        own = kept(system[0], NAME)
        parts = [part for message in system for part in _system_parts(message)]
        body[own.get("key", "system_instruction")] = {**own.get("instruction", {}), "parts": parts}
    body["contents"] = _contents(messages, len(system), notes)
    body.update(metadata)
    if gather_tools and "tools" not in body:
        names = dict.fromkeys(p["toolName"] for m in messages for p in _parts(m)
                              if p["type"] == "tool-call" and not p.get("providerExecuted"))
        if names:
            body["tools"] = [{"functionDeclarations": [{"name": name} for name in names]}]
    return body


def _system_parts(message: dict) -> list[dict]:
    """The text parts a system message was read from: split at the lengths kept, when they still fit."""
    own, text = kept(message, NAME), message["content"]
    lengths, texts = own.get("lengths") or [len(text)], []
    for length in lengths:
        start = sum(len(t) + 1 for t in texts)
        texts.append(text[start:start + length])
    if "\n".join(texts) != text:  # the text changed since import: one part
        texts = [text]
    extras = own.get("parts") or [{}] * len(texts)
    return [{"text": t, **(extras[i] if len(extras) == len(texts) else {})} for i, t in enumerate(texts)]


def _parts(message: dict) -> list[dict]:
    return message["content"] if isinstance(message["content"], list) else []


def _extra(item: dict) -> dict:
    """The source's own fields kept on a message or part (not chatconv's marks)."""
    return {key: value for key, value in kept(item, NAME).items() if key not in MARKS}


def _named(item: dict):
    spelled = kept(item, NAME).get("spelled", {})
    return lambda name: spelled.get(name, name)


def _contents(messages: list[dict], start: int, notes: list) -> list[dict]:
    """One content per turn (of the messages from `start`): a message joins the turn before when
    it has the same wire role (a tool message and the user's text are one user turn), unless
    import saw two turns there."""
    contents: list[dict] = []
    last_role = None
    for index in range(start, len(messages)):
        message = messages[index]
        own = kept(message, NAME)
        role = own.get("role", WIRE_ROLES[message["role"]])
        written = [_part(p, message["role"], index, notes) for p in message_parts_of(message)]
        parts = [p for p in written if p is not None]
        if not parts and not own.get("noParts"):  # nothing of it (or all left out): no turn (the API refuses an empty one)
            if not written:
                notes.append((index, "part-left-out", "a message with nothing in it is left out (Gemini refuses an "
                              "empty turn)"))
            continue
        wire = WIRE_ROLES[message["role"]]
        if contents and last_role == wire and not own.get("newTurn"):
            contents[-1]["parts"].extend(parts)
            continue
        content: dict[str, Any] = {} if own.get("noRole") else {"role": role}
        if parts or not own.get("noParts"):
            content["parts"] = parts
        contents.append({**content, **_extra(message)})
        last_role = wire
    return contents


def _part(part: dict, role: str, index: int, notes: list) -> dict | None:
    kind, name, own = part["type"], _named(part), kept(part, NAME)
    if kind == "text":
        if not part["text"].strip() and not _extra(part):  # refused by the API, and says nothing (as for Anthropic)
            notes.append((index, "blank-text", "a text part of white space only is left out (Gemini refuses empty text)"))
            return None
        return {"text": part["text"], **_extra(part)}
    if kind == "reasoning":
        if not part["text"] and not _extra(part):  # another provider's opaque reasoning (encrypted, redacted)
            notes.append((index, "part-left-out", "reasoning with no text (another provider's encrypted or redacted "
                          "reasoning) is left out (Gemini refuses an empty text part)"))
            return None
        return {"text": part["text"], "thought": True, **_extra(part)}
    if kind in ("image", "file"):
        written = _media(part, own, name, index, notes)
        return None if written is None else {**written, **_extra(part)}
    if role == "assistant" and (part.get("providerExecuted") or kind == "tool-result"):
        # Code the model ran itself and its result, in its own turn: Gemini's code execution
        # only. Another provider's server tool (a web search) has no place: left out, noted.
        value = part.get("input", {}) if kind == "tool-call" else part["output"].get("value")
        if not is_code_execution(part, value):
            notes.append((index, "part-left-out", f"the {'call' if kind == 'tool-call' else 'result'} of "
                          f"{part['toolName']!r}, a tool another provider ran itself, is left out (Gemini has no "
                          "place for it)"))
            return None
        return {name("executableCode" if kind == "tool-call" else "codeExecutionResult"): value, **_extra(part)}
    if kind == "tool-call":
        call: dict[str, Any] = {} if own.get("noId") else {"id": part["toolCallId"]}
        call["name"] = part["toolName"]
        if not own.get("noArgs"):
            # args are an object; a log that held them as JSON text gets the object (the renderer
            # refuses an input that is no object)
            call["args"] = part.get("input", {})
            if own.get("argsText"):
                notes.append((index, "export-changed", f"the args of call {part['toolCallId']!r}, JSON text where "
                              "it was read, are written as the object Gemini takes"))
        return {name("functionCall"): {**call, **own.get("inner", {})}, **_extra(part)}
    output = part["output"]
    value = output.get("value")
    if not (isinstance(value, dict) or own.get("bare")):  # as the renderer wraps a value that is no object
        value = {"error" if str(output.get("type")).startswith("error-") else "result": value}
    response: dict[str, Any] = {} if own.get("noId") else {"id": part["toolCallId"]}
    response.update({"name": part["toolName"], "response": value, **own.get("inner", {})})
    return {name("functionResponse"): response, **_extra(part)}


def _media(part: dict, own: dict, name, index: int, notes: list) -> dict | None:
    """inline_data (base64) or file_data (a URI), as read, or as the renderer tells them apart; a
    gs:// URI is file_data. Data that is neither base64 nor a URI (a file id, a path) has no place
    in Gemini's body: None, noted."""
    if "as" in own:
        data, media_type, how = part["image"] if part["type"] == "image" else part["data"], part.get("mediaType"), own["as"]
    else:
        data, media_type, is_url = media(part)
        how = "file_data" if is_url or data.startswith("gs://") else "inline_data"
    if how == "inline_data" and not is_base64(data):
        notes.append((index, "part-left-out", f"a {part['type']} part whose data is neither base64 nor a URL "
                      f"({data[:40]!r}) is left out (Gemini takes inline data in base64, files by URI)"))
        return None
    inner = {} if own.get("noMimeType") else {name("mime_type"): media_type or "image/png"}
    inner[name("file_uri") if how == "file_data" else "data"] = data
    return {name(how): {**inner, **own.get("inner", {})}}
