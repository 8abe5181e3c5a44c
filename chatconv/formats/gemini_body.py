"""Gemini generateContent request bodies written from model messages (the `gemini` format's export).

What import kept (providerOptions["gemini"], the body's fields in metadata) is read back, so
that a body read and written again is the same JSON value; messages from other formats are
written in the spellings chatconv's Gemini renderer uses (system_instruction, inline_data,
file_data, functionCall, functionResponse).
"""

from __future__ import annotations

from typing import Any

from ..providers.rules import media, message_parts_of
from .reading import kept, tool_arguments

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


def write(messages: list[dict], metadata: dict, gather_tools: bool = False) -> dict:
    """A generateContent request body: the system instruction, `contents`, then what import kept
    of the body; with `gather_tools`, `tools` declaring the called functions when it had none."""
    system = []
    while len(system) < len(messages) and messages[len(system)]["role"] == "system":
        system.append(messages[len(system)])
    body: dict[str, Any] = {}
    if system:
        own = kept(system[0], NAME)
        parts = [part for message in system for part in _system_parts(message)]
        body[own.get("key", "system_instruction")] = {**own.get("instruction", {}), "parts": parts}
    body["contents"] = _contents(messages[len(system):])
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


def _contents(messages: list[dict]) -> list[dict]:
    """One content per turn: a message joins the turn before when it has the same wire role (a
    tool message and the user's text are one user turn), unless import saw two turns there."""
    contents: list[dict] = []
    last_role = None
    for message in messages:
        own = kept(message, NAME)
        role = own.get("role", WIRE_ROLES[message["role"]])
        parts = [_part(p, message["role"]) for p in message_parts_of(message)]
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


def _part(part: dict, role: str) -> dict:
    kind, name, own = part["type"], _named(part), kept(part, NAME)
    if kind == "text":
        return {"text": part["text"], **_extra(part)}
    if kind == "reasoning":
        return {"text": part["text"], "thought": True, **_extra(part)}
    if kind in ("image", "file"):
        return {**_media(part, own, name), **_extra(part)}
    if kind == "tool-call" and part.get("providerExecuted"):
        return {name("executableCode"): part.get("input", {}), **_extra(part)}
    if kind == "tool-call":
        call: dict[str, Any] = {} if own.get("noId") else {"id": part["toolCallId"]}
        call["name"] = part["toolName"]
        if not own.get("noArgs"):
            call["args"] = tool_arguments(part, NAME) if own.get("argsText") else part.get("input", {})
        return {name("functionCall"): {**call, **own.get("inner", {})}, **_extra(part)}
    output = part["output"]
    if role == "assistant":  # a result in the model's own turn: the code it ran itself
        return {name("codeExecutionResult"): output.get("value"), **_extra(part)}
    value = output.get("value")
    if not (isinstance(value, dict) or own.get("bare")):  # as the renderer wraps a value that is no object
        value = {"error" if str(output.get("type")).startswith("error-") else "result": value}
    response: dict[str, Any] = {} if own.get("noId") else {"id": part["toolCallId"]}
    response.update({"name": part["toolName"], "response": value, **own.get("inner", {})})
    return {name("functionResponse"): response, **_extra(part)}


def _media(part: dict, own: dict, name) -> dict:
    """inline_data (base64) or file_data (a URI), as read, or as the renderer tells them apart."""
    if "as" in own:
        data, media_type, how = part["image"] if part["type"] == "image" else part["data"], part.get("mediaType"), own["as"]
    else:
        data, media_type, is_url = media(part)
        how = "file_data" if is_url else "inline_data"
    inner = {} if own.get("noMimeType") else {name("mime_type"): media_type or "image/png"}
    inner[name("file_uri") if how == "file_data" else "data"] = data
    return {name(how): {**inner, **own.get("inner", {})}}
