"""OpenAI Chat Completions bodies written back from model messages (openai_chat.py reads them):
the fields import kept under providerOptions["openai-chat"] restore what a model message has no
place for, so that import then export gives the body back.
"""

from __future__ import annotations

from typing import Any

from ...providers.rules import is_url, result_text
from ..reading import kept, tool_arguments

NAME = "openai-chat"
TARGET = "openai"



def write(messages: list[dict], metadata: dict, gather_tools: bool = False, notes: list | None = None) -> dict:
    """A Chat Completions request body (or fine-tuning line): `messages`, then what import kept
    of the body; with `gather_tools`, `tools` named after the calls when the body had none.

    What Chat Completions has no place for is left out, and what it takes in another form is
    written in that form, each noted in `notes` as (message index, problem code, what): an
    assistant's reasoning, files and server tool results; tool-call arguments logged as an object."""
    notes = notes if notes is not None else []
    out = [entry for index, message in enumerate(messages) for entry in written_message(message, index, notes)]
    body = {"messages": out, **metadata}
    if gather_tools and "tools" not in body:
        names = dict.fromkeys(p["toolName"] for m in messages if isinstance(m["content"], list)
                              for p in m["content"] if p["type"] == "tool-call")
        if names:
            body["tools"] = [{"type": "function", "function": {"name": name}} for name in names]
    return body


def _extra(item: dict, *drop: str) -> dict:
    return {key: value for key, value in kept(item, NAME).items() if key not in drop}


# The fields of a Chat Completions request body (the openai SDK's CompletionCreateParams): a
# `{"messages": [...]}` record with any other column is a dataset's row (hf-messages), not a body.
BODY_FIELDS = frozenset({
    "messages", "model", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
    "presence_penalty", "prompt_cache_key", "prompt_cache_retention", "reasoning_effort", "response_format",
    "safety_identifier", "seed", "service_tier", "stop", "store", "stream", "stream_options", "temperature",
    "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity", "web_search_options"})

# What read() marks (as opposed to the source's own fields, kept beside them), by where it marks.
MESSAGE_MARKS = ("role", "content", "contentParts", "noContent", "choice", "response")
PART_MARKS = ("role", "refusal", "rawArguments", "arguments", "noType", "noPayload", "argumentsObject", "legacy",
               "type", "fileId", "textParts", "notUrl")


def written_message(message: dict, index: int, notes: list) -> list[dict]:
    role, content, own = message["role"], message["content"], kept(message, NAME)
    if role == "system":
        return [{"role": own.get("role", "system"), "content": own.get("content", content),
                 **_extra(message, *MESSAGE_MARKS)}]
    if role == "user":
        return [{"role": "user", "content": content if isinstance(content, str) else [_user_written(p) for p in content],
                 **_extra(message, *MESSAGE_MARKS)}]
    if role == "assistant":
        return _assistant_written(message, own, index, notes)
    return [_result_written(part) for part in content]


def _user_written(part: dict) -> dict:
    own, extra = kept(part, NAME), _extra(part, *PART_MARKS)
    if part["type"] == "text":
        return {"type": "text", "text": part["text"], **extra}
    if part["type"] == "image":
        as_is = is_url(part["image"]) or own.get("notUrl")
        url = part["image"] if as_is else f"data:{part.get('mediaType', 'image/png')};base64,{part['image']}"
        return {"type": "image_url", "image_url": {"url": url, **_inner(own, "image_url")}, **_extra(part, *PART_MARKS, "image_url")}
    if own.get("type") == "input_audio":
        audio = {"data": part["data"], "format": part["mediaType"].rpartition("/")[2], **_inner(own, "input_audio")}
        return {"type": "input_audio", "input_audio": audio, **_extra(part, *PART_MARKS, "input_audio")}
    file = {"file_id": part["data"]} if own.get("fileId") else {
        "file_data": part["data"] if is_url(part["data"]) else f"data:{part['mediaType']};base64,{part['data']}"}
    if "filename" in part:
        file["filename"] = part["filename"]
    return {"type": "file", "file": {**file, **_inner(own, "file")}, **_extra(part, *PART_MARKS, "file")}


def _inner(own: dict, name: str) -> dict:
    """The fields import kept of a part's inner object (image_url, input_audio, file, function)."""
    value = own.get(name)
    return value if isinstance(value, dict) else {}


def _assistant_written(message: dict, own: dict, index: int, notes: list) -> list[dict]:
    """The assistant's entry, or none when nothing of it has a place (only reasoning, say): the
    API refuses an assistant message with no content, tool_calls or function_call."""
    content = message["content"]
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for part in parts:
        if part["type"] not in ("text", "tool-call"):
            notes.append((index, "part-left-out", f"the assistant's {part['type']} part is left out (Chat Completions "
                          "has no place for it)"))
        elif part["type"] == "tool-call" and part.get("providerExecuted"):
            notes.append((index, "part-left-out", f"the call of {part['toolName']!r}, a tool the provider ran itself, "
                          "is left out (Chat Completions has no place for it)"))
    every_part, parts = parts, [part for part in parts if not (part["type"] == "tool-call" and part.get("providerExecuted"))]
    texts = [p for p in parts if p["type"] == "text" and not kept(p, NAME).get("refusal")]
    refusals = [p["text"] for p in parts if p["type"] == "text" and kept(p, NAME).get("refusal")]
    calls = [p for p in parts if p["type"] == "tool-call" and kept(p, NAME).get("legacy") != "function_call"]
    legacy = [p for p in parts if p["type"] == "tool-call" and kept(p, NAME).get("legacy") == "function_call"]
    entry: dict[str, Any] = {"role": "assistant"}
    if own.get("contentParts"):
        entry["content"] = [{"type": "refusal", "refusal": p["text"], **_extra(p, *PART_MARKS)}
                            if kept(p, NAME).get("refusal")
                            else {"type": "text", "text": p["text"], **_extra(p, *PART_MARKS)}
                            for p in parts if p["type"] == "text"]
        refusals = []
    elif texts:
        entry["content"] = "\n".join(p["text"] for p in texts)
    elif not own.get("noContent"):
        entry["content"] = None
    if refusals:
        entry["refusal"] = "\n".join(refusals)
    if calls:
        entry["tool_calls"] = [_call_written(p, index, notes) for p in calls]
    for part in legacy:
        entry["function_call"] = {"name": part["toolName"], "arguments": tool_arguments(part, NAME),
                                  **_extra(part, *PART_MARKS)}
    if entry.get("content") is None and not any(key in entry for key in ("refusal", "tool_calls", "function_call")):
        if not every_part:
            notes.append((index, "part-left-out", "an assistant message with nothing in it is left out"))
        return []  # nothing of it has a place; its parts are noted above
    return [{**entry, **_request_fields(message, own, index, notes)}]


# The fields a request's assistant message takes (and a fine-tuning line's `weight`): a response's
# message holds others (annotations, its own reasoning), which have no place in a request.
ASSISTANT_REQUEST_FIELDS = frozenset({"name", "refusal", "audio", "function_call", "tool_calls", "weight"})


def _request_fields(message: dict, own: dict, index: int, notes: list) -> dict:
    """The assistant message's own fields as a request body takes them: all of them, unless the
    message was a response's, whose response-only fields are left out (noted when not empty)."""
    extra = _extra(message, *MESSAGE_MARKS)
    if "choice" not in own and "response" not in own:
        return extra
    for key, value in extra.items():
        if key not in ASSISTANT_REQUEST_FIELDS and value not in (None, [], {}, ""):
            notes.append((index, "part-left-out", f"the response's `{key}` is left out (a request's assistant message "
                          "has no place for it)"))
    return {key: value for key, value in extra.items() if key in ASSISTANT_REQUEST_FIELDS}


def _call_written(part: dict, index: int, notes: list) -> dict:
    own = kept(part, NAME)
    kind = own.get("type", "function")
    extra = _extra(part, *PART_MARKS, kind)
    if kind == "custom":
        body = {"name": part["toolName"], "input": part["input"]}
    else:
        # arguments are JSON text; a log that held them as an object gets that object's text
        body = {"name": part["toolName"], "arguments": tool_arguments(part, NAME)}
        if own.get("argumentsObject"):
            notes.append((index, "export-changed", f"the arguments of call {part['toolCallId']!r}, an object where "
                          "it was read, are written as the JSON text Chat Completions takes"))
    if own.get("noPayload") and part.get("input") in ({}, ""):
        del body["input" if kind == "custom" else "arguments"]
    body.update(_inner(own, kind))
    call = {"id": part["toolCallId"], "type": kind, kind: body}
    if own.get("noType"):
        del call["type"]
    return {**call, **extra}


def _result_written(part: dict) -> dict:
    own, output = kept(part, NAME), part["output"]
    written = own.get("textParts")
    if output["type"] == "content" and all(item["type"] == "text" for item in output["value"]):
        content: Any = [{"type": "text", "text": item["text"]} for item in output["value"]]
        if isinstance(written, list) and [p.get("text") for p in written] == [p["text"] for p in content]:
            content = written
    else:
        content = result_text(output)
    if own.get("role") == "function":
        return {"role": "function", "name": part["toolName"], "content": content, **_extra(part, *PART_MARKS)}
    return {"role": "tool", "tool_call_id": part["toolCallId"], "content": content, **_extra(part, *PART_MARKS)}
