"""Streamed responses, assembled into the response the API would have returned unstreamed, which
its format then reads as any logged response (the same text, to the byte, and the same calls).

A file is a stream when its events are: Server-Sent Events (`event:` / `data:` lines, as the
APIs send them), or JSON lines (or a JSON array) of the events themselves: OpenAI chat chunks
(`chat.completion.chunk`), Responses events (`response.*`), Anthropic's Messages events
(`message_start` ...), Gemini chunks (responses that share a `responseId`; Gemini CLI writes them
as an array). A file may hold several streams, one after the other: each is a record of its own,
at the line its first event is on (problems are placed there; their paths are the assembled
response's).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

import orjson

from ..limits import LIMITS
from ..problems import Problem
from ..sources import Record
from ..sources.text import open_binary, read_whole

SUFFIXES = (".sse",)  # a folder's stream files; a stream under any other name is told from its lines
# How far into a file to look to tell a stream: its first events are within it.
_PEEK_BYTES = 64 * 1024

_ANTHROPIC_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                               "message_delta", "message_stop", "ping", "error"})


def claims(file: str) -> bool:
    """Whether `file` holds a stream (see the module): told from its first lines."""
    if file == "-":
        return False
    try:
        with open_binary(file) as stream:
            head = stream.read(_PEEK_BYTES)
    except Exception:  # unreadable: the usual reading says why
        return False
    events = _events(head, whole=False, complete=len(head) < _PEEK_BYTES)
    provider = next((_provider(payload) for _, payload in events if _provider(payload) is not None), None)
    return provider is not None and (provider != "gemini" or _is_gemini_stream([payload for _, payload in events]))


def records(file: str) -> Iterator[Record]:
    """Each stream of the file, assembled: a Record of the response it makes (or of its error)."""
    with open_binary(file) as stream:
        data = read_whole(stream, file, LIMITS.max_file_bytes)
    events, cut = _events(data, whole=True, file=file), None
    if events and isinstance(events[-1], Problem):  # a stream cut short: what came before it is read
        cut = events.pop()
    streams = list(_streams(events))
    for number, (first_line, payloads) in enumerate(streams):
        # Its provider's: an event of no provider's (Azure's prompt_filter_results chunk) goes along.
        provider = next((_provider(p) for p in payloads if _provider(p) is not None), None)
        if provider is None:
            continue
        try:
            record = Record(file, first_line, data=ASSEMBLERS[provider](payloads), positions={})
        except (ValueError, TypeError, KeyError, AttributeError) as exc:  # an event of a shape not foreseen
            record = Record(file, first_line, error=Problem(
                file, first_line, 1, "$", f"a {provider} stream chatconv cannot assemble ({type(exc).__name__}: {exc})",
                "error", "check the stream's events against the API's streaming reference", "unknown-format"))
        if cut is not None and number == len(streams) - 1:
            record.problems.append(cut)
        yield record


def _events(data: bytes, whole: bool, file: str = "", complete: bool = False) -> list:
    """(line, payload) of each event: SSE `data:` lines, JSON lines, or the elements of a JSON
    array; read whole, a line that is not JSON after some events ends the stream, and is a
    Problem last in the list."""
    text = data.removeprefix(b"\xef\xbb\xbf")
    stripped = text.lstrip()
    if stripped.startswith(b"[") and whole:
        try:
            array = orjson.loads(text)
        except orjson.JSONDecodeError:
            array = None
        if isinstance(array, list):
            return [(1, item) for item in array]
    if stripped.startswith(b"[") and not whole:  # a JSON array, peeked at: its first elements
        return _array_head(text)
    events = []
    lines = text.split(b"\n")
    if not whole and not complete and len(lines) > 1:
        lines = lines[:-1]  # the last line peeked at may be cut (unless the peek held the whole file)
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith((b"event:", b":", b"id:", b"retry:")):
            continue
        if line.startswith(b"data:"):
            line = line[5:].strip()
            if line == b"[DONE]":
                continue
        try:
            events.append((number, orjson.loads(line)))
        except orjson.JSONDecodeError as exc:
            if not events:
                return []  # not a stream: the usual reading says what it is
            if not whole:
                return events  # peeked at: reading it whole says where it breaks off
            # A stream cut short (the connection dropped, the log was killed): read up to here.
            events.append(Problem(file, number, 1, "$", f"the stream is cut short here ({exc}): what "
                                  "came before is read", "warning", None, "import-changed"))
            break
    return events


def _array_head(text: bytes) -> list[tuple[int, Any]]:
    """The first whole elements of a JSON array that was cut short."""
    decoder_input = text.decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    i, found = decoder_input.index("[") + 1, []
    while len(found) < 2:
        while i < len(decoder_input) and decoder_input[i] in " \t\r\n,":
            i += 1
        try:
            value, i = decoder.raw_decode(decoder_input, i)
        except ValueError:
            break
        found.append((1, value))
    return found


def _provider(event: Any) -> str | None:
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    if event.get("object") == "chat.completion.chunk":
        return "openai-chat"
    if isinstance(kind, str) and kind.startswith("response.") and isinstance(event.get("sequence_number", 0), int):
        return "openai-responses"
    if kind in _ANTHROPIC_EVENTS and (kind != "error" or isinstance(event.get("error"), dict)):
        return "anthropic"
    if isinstance(event.get("candidates"), list) or "usageMetadata" in event:
        return "gemini"
    return None


def _is_gemini_stream(payloads: list) -> bool:
    """Gemini chunks, not a file of whole responses: at least two that share a responseId."""
    ids = [p.get("responseId") for p in payloads if isinstance(p, dict)]
    return len(ids) > 1 and ids[0] is not None and ids[0] == ids[1]


def _streams(events: list[tuple[int, Any]]) -> Iterator[tuple[int, list]]:
    """The events cut into streams: a new one starts where its provider's first event is. An
    event of no provider's (Azure's prompt_filter_results chunk, `choices: []`, `id: ""`) goes
    with the stream it is in, and starts none."""
    current: list = []
    known = None  # the stream's last event of a provider's
    first_line = 1
    for line, payload in events:
        if current and known is not None and _provider(payload) is not None and _starts_a_stream(known, payload):
            yield first_line, current
            current, known = [], None
        if not current:
            first_line = line
        current.append(payload)
        if _provider(payload) is not None:
            known = payload
    if current:
        yield first_line, current


def _starts_a_stream(before: Any, event: Any) -> bool:
    if not isinstance(event, dict) or not isinstance(before, dict):
        return False
    provider = _provider(event)
    if provider != _provider(before):
        return True
    if provider == "anthropic":
        return event.get("type") == "message_start"
    if provider == "openai-responses":
        return event.get("type") == "response.created"
    if provider == "openai-chat":
        return event.get("id") != before.get("id")
    return event.get("responseId") != before.get("responseId")


# --- OpenAI chat: chunks -> a chat.completion ----------------------------------------------------


def _openai_chat(chunks: list[dict]) -> dict:
    response: dict[str, Any] = {}
    choices: dict[int, dict] = {}
    for chunk in chunks:
        for key, value in chunk.items():
            if key in ("choices", "obfuscation"):  # obfuscation: padding of each chunk, no part of the answer
                continue
            response[key] = "chat.completion" if key == "object" else value
        for delta_choice in chunk.get("choices") or []:
            index = delta_choice.get("index", 0)
            choice = choices.setdefault(index, {"index": index, "message": {"role": "assistant", "content": None}})
            for key, value in delta_choice.items():
                if key not in ("index", "delta") and (value is not None or key not in choice):
                    choice[key] = value
            _add_chat_delta(choice["message"], delta_choice.get("delta") or {})
    response["choices"] = [choices[index] for index in sorted(choices)]
    for choice in response["choices"]:
        calls = choice["message"].get("tool_calls")
        if calls is not None:
            choice["message"]["tool_calls"] = [calls[index] for index in sorted(calls)]
    return response


def _add_chat_delta(message: dict, delta: dict) -> None:
    for key, value in delta.items():
        if key in ("content", "refusal", "reasoning_content", "reasoning") and isinstance(value, str):
            message[key] = (message.get(key) or "") + value
        elif key in ("content", "refusal") and value is None:
            message.setdefault(key, None)  # as the unstreamed message has it: null
        elif key == "tool_calls" and isinstance(value, list):
            calls = message.setdefault("tool_calls", {})
            for piece in value:
                call = calls.setdefault(piece.get("index", len(calls)),
                                        {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                for field, part in piece.items():
                    if field == "function" and isinstance(part, dict):
                        call["function"]["arguments"] += part.get("arguments") or ""
                        # The name comes whole in the call's first delta; some servers (OpenRouter)
                        # say it again in a later one: the same name, not a piece of it.
                        name = part.get("name") or ""
                        if name != call["function"]["name"]:
                            call["function"]["name"] += name
                    elif field != "index" and part is not None:
                        call[field] = part
        elif key != "role" and value is not None:
            message[key] = value


# --- Responses: events -> the response ----------------------------------------------------------


def _openai_responses(events: list[dict]) -> dict:
    done = [e["response"] for e in events if e.get("type") in ("response.completed", "response.incomplete",
                                                                  "response.failed") and isinstance(e.get("response"), dict)]
    if done:
        return done[-1]  # the whole response, as the API gives it at the end of the stream
    started = next((e["response"] for e in events if isinstance(e.get("response"), dict)), {})
    response = {**started, "object": "response"}
    items = {e.get("output_index", 0): e["item"] for e in events
             if e.get("type") == "response.output_item.done" and isinstance(e.get("item"), dict)}
    response["output"] = [items[index] for index in sorted(items)]
    return response


# --- Anthropic: Messages events -> a message ----------------------------------------------------


def _anthropic(events: list[dict]) -> dict:
    message: dict[str, Any] = {"type": "message", "role": "assistant", "content": []}
    blocks: dict[int, dict] = {}
    json_text: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message = {**copy.deepcopy(event["message"]), "content": []}
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            blocks[event.get("index", len(blocks))] = copy.deepcopy(event["content_block"])
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            block, delta = blocks.setdefault(event.get("index", 0), {}), event["delta"]
            if delta.get("type") == "input_json_delta":
                json_text[event.get("index", 0)] = json_text.get(event.get("index", 0), "") + delta.get("partial_json", "")
            elif delta.get("type") == "citations_delta":
                block.setdefault("citations", []).append(delta.get("citation"))
            else:
                for field in ("text", "thinking", "signature"):
                    if isinstance(delta.get(field), str):
                        block[field] = (block.get(field) or "") + delta[field]
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
            if isinstance(event.get("usage"), dict):
                message["usage"] = {**(message.get("usage") or {}), **event["usage"]}
    for index, text in json_text.items():
        blocks[index]["input"] = orjson.loads(text) if text.strip() else {}
    message["content"] = [blocks[index] for index in sorted(blocks)]
    return message


# --- Gemini: chunks -> a response ---------------------------------------------------------------


def _gemini(chunks: list[dict]) -> dict:
    response: dict[str, Any] = {}
    candidates: dict[int, dict] = {}
    for chunk in chunks:
        for key, value in chunk.items():
            if key != "candidates":
                response[key] = value
        for position, piece in enumerate(chunk.get("candidates") or []):
            index = piece.get("index", position)
            candidate = candidates.setdefault(index, {})
            for key, value in piece.items():
                if key == "content" and isinstance(value, dict):
                    content = candidate.setdefault("content", {})
                    for field, part in value.items():
                        if field != "parts":
                            content[field] = part
                    _add_gemini_parts(content.setdefault("parts", []), value.get("parts") or [])
                else:
                    candidate[key] = value
    if candidates:
        response = {"candidates": [candidates[index] for index in sorted(candidates)], **response}
    return response


def _add_gemini_parts(parts: list[dict], pieces: list) -> None:
    """Text pieces join the text part before them (thought text to thought text); anything else
    (a function call, a signature's own part) is a part of its own."""
    for piece in pieces:
        last = parts[-1] if parts else None
        joins = (isinstance(piece, dict) and isinstance(last, dict) and set(piece) - {"thoughtSignature"} in (
            {"text"}, {"text", "thought"}) and set(last) - {"thoughtSignature"} == set(piece) - {"thoughtSignature"}
            and last.get("thought") == piece.get("thought") and "thoughtSignature" not in last)
        if joins:
            last["text"] += piece["text"]
            if "thoughtSignature" in piece:
                last["thoughtSignature"] = piece["thoughtSignature"]
        else:
            parts.append(copy.deepcopy(piece))


ASSEMBLERS = {"openai-chat": _openai_chat, "openai-responses": _openai_responses, "anthropic": _anthropic,
              "gemini": _gemini}
