"""Streamed responses, assembled into the response the API would have returned unstreamed, which
its format then reads as any logged response (the same text, to the byte, and the same calls).

A file is a stream when its events are: Server-Sent Events (`event:` / `data:` lines, as the
APIs send them), or JSON lines (or a JSON array) of the events themselves: OpenAI chat chunks
(`chat.completion.chunk`), Responses events (`response.*`), Anthropic's Messages events
(`message_start` ...), Gemini chunks (responses that share a `responseId`; Gemini CLI writes them
as an array), the AI SDK's UI message stream (`start`, `text-delta`, `tool-input-available`, ...). A file may hold several streams, one after the other: each is a record of its own,
at the line its first event is on (problems are placed there; their paths are the assembled
response's).
This module tells and cuts a file into streams; assembly.py makes each one's response.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import orjson

from ...limits import LIMITS
from ...problems import Problem
from ...sources import Record
from ...sources.files import is_regular_file
from ...sources.text import open_binary, read_whole
from .assembly import ASSEMBLERS

SUFFIXES = (".sse",)  # a folder's stream files; a stream under any other name is told from its lines
# How far into a file to look to tell a stream: its first events are within it.
_PEEK_BYTES = 64 * 1024

_ANTHROPIC_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                               "message_delta", "message_stop", "ping"})
# The AI SDK's UI message stream chunks (toUIMessageStream; data-* parts beside them).
_UI_CHUNKS = frozenset({"start", "start-step", "finish-step", "finish", "text-start", "text-delta", "text-end",
                        "reasoning-start", "reasoning-delta", "reasoning-end", "tool-input-start", "tool-input-delta",
                        "tool-input-available", "tool-input-error", "tool-output-available", "tool-output-error",
                        "source-url", "source-document", "file", "message-metadata", "abort"})
# The event that ends each provider's stream; a stream without it was cut short.
_ENDS = {"ai-sdk-ui": lambda e: e.get("type") == "finish",
         "anthropic": lambda e: e.get("type") == "message_stop",
         "openai-responses": lambda e: e.get("type") in ("response.completed", "response.incomplete", "response.failed"),
         "openai-chat": lambda e: any(isinstance(c, dict) and c.get("finish_reason") for c in e.get("choices") or []),
         "gemini": lambda e: any(isinstance(c, dict) and c.get("finishReason") for c in e.get("candidates") or [])}


def claims(file: str) -> bool:
    """Whether `file` holds a stream (see the module): told from its first lines."""
    if not is_regular_file(file):  # a pipe's bytes, peeked at, would be gone for its reading
        return False
    try:
        with open_binary(file) as stream:
            head = stream.read(_PEEK_BYTES)
    except Exception:  # unreadable: the usual reading says why
        return False
    events = [event for event in _events(head, whole=False, complete=len(head) < _PEEK_BYTES)
              if not isinstance(event, Problem)]
    # Its first event of a provider's opens the file, or follows only what rides along with one.
    first = next((payload for _, payload, _ in events if not _rides_along(payload)), None)
    provider = _provider(first)
    return provider is not None and (provider != "gemini" or _is_gemini_stream([payload for _, payload, _ in events]))


def records(file: str) -> Iterator[Record]:
    """Each stream of the file, assembled: a Record of the response it makes (or of its error),
    at the line of its first event; a line of the file that is no stream's event is a record of
    its own, read as any record is; a line that is not JSON is left out with a warning."""
    with open_binary(file) as stream:
        data = read_whole(stream, file, LIMITS.max_file_bytes)
    pending: list[Problem] = []  # warnings of lines left out, given to the record after them
    held: Record | None = None  # the last record made: the warnings of lines after it, if last, go to it
    for item in _items(_events(data, whole=True, file=file)):
        if isinstance(item, Problem):
            pending.append(item)
            continue
        if item[0] == "record":
            _, line, payload, raw = item
            record = Record(file, line, data=payload, text=raw) if raw is not None else Record(
                file, line, data=payload, positions={})
        else:
            record = _assembled(file, item[1])
        record.problems[:0] = pending
        pending = []
        if held is not None:
            yield held
        held = record
    if held is not None:
        held.problems += pending
        yield held


def _assembled(file: str, events: list[tuple[int, Any]]) -> Record:
    """The record of one stream (its events with their lines): the response, with warnings for an
    error event in it or an end that never came."""
    first_line = events[0][0]
    provider = next(_provider(payload) for _, payload in events if _provider(payload) is not None)
    notes: list[str] = []
    try:
        response = ASSEMBLERS[provider]([payload for _, payload in events], notes)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # an event of a shape not foreseen
        return Record(file, first_line, error=Problem(
            file, first_line, 1, "$", f"a {provider} stream chatconv cannot assemble ({type(exc).__name__}: {exc})",
            "error", "check the stream's events against the API's streaming reference", "unknown-format"))
    record = Record(file, first_line, data=response, positions={})
    for line, payload in events:
        if isinstance(payload, dict) and (payload.get("type") == "error" or "error" in payload and provider == "openai-chat"):
            record.problems.append(Problem(file, line, 1, "$", f"the stream holds an error event ({_error_text(payload)}): "
                                           "the response is what came before it", "warning", None, "import-changed"))
    if not any(_ENDS[provider](payload) for _, payload in events if isinstance(payload, dict)):
        notes.append("the stream ends before its last event: the response is what came, unfinished")
    record.problems += [Problem(file, first_line, 1, "$", note, "warning", None, "import-changed") for note in notes]
    return record


def _error_text(event: dict) -> str:
    error = event.get("error", event.get("errorText"))  # (the AI SDK's UI stream says errorText)
    message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    return message if isinstance(message, str) else "no message"


def _events(data: bytes, whole: bool, file: str = "", complete: bool = False) -> list:
    """(line, payload, the line's bytes or None) of each event: SSE `data:` lines, JSON lines, or
    the elements of a JSON array. Read whole, a line that is not JSON after some events is a
    Problem in the list (a warning: it is left out), and the lines after it are read on."""
    text = data.removeprefix(b"\xef\xbb\xbf")
    stripped = text.lstrip()
    if stripped.startswith(b"[") and whole:
        try:
            array = orjson.loads(text)
        except orjson.JSONDecodeError:
            array = None
        if isinstance(array, list):
            return [(1, item, None) for item in array]
    if stripped.startswith(b"[") and not whole:  # a JSON array, peeked at: its first elements
        return _array_head(text)
    events: list = []
    lines = text.split(b"\n")
    if not whole and not complete and len(lines) > 1:
        lines = lines[:-1]  # the last line peeked at may be cut (unless the peek held the whole file)
    for number, line in enumerate(lines, 1):
        raw = line
        line = line.strip()
        if not line or line.startswith((b"event:", b":", b"id:", b"retry:")):
            continue
        if line.startswith(b"data:"):
            line = line[5:].strip()
            raw = None  # an SSE line: the payload is not the line
            if line == b"[DONE]":
                continue
        try:
            events.append((number, orjson.loads(line), raw))
        except orjson.JSONDecodeError as exc:
            if not any(not isinstance(event, Problem) for event in events):
                return []  # not a stream: the usual reading says what it is
            if not whole:
                return events  # peeked at: reading it whole says where it breaks off
            last = number == len(lines) or all(not rest.strip() for rest in lines[number:])
            events.append(Problem(file, number, 1, "$", f"{'the stream is cut short here' if last else 'a line that is not JSON'} "
                                  f"({exc}): left out, {'what came before is read' if last else 'the lines after it are read'}",
                                  "warning", None, "import-changed"))
    return events


def _array_head(text: bytes) -> list[tuple[int, Any, None]]:
    """The first whole elements of a JSON array that was cut short."""
    decoder_input = text.decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    i, found = decoder_input.index("[") + 1, []
    while len(found) < 2:
        while i < len(decoder_input) and decoder_input[i] in " \t\r\n,":
            i += 1
        try:
            value, i = decoder.raw_decode(decoder_input, i)
        except (ValueError, RecursionError):  # (nested past the json module's ~1,000 levels: no stream's)
            break
        found.append((1, value, None))
    return found


def _provider(event: Any) -> str | None:
    if not isinstance(event, dict):
        return None
    kind = event.get("type") if isinstance(event.get("type"), str) else None  # a list there is no event's type
    if event.get("object") == "chat.completion.chunk":
        return "openai-chat"
    if isinstance(kind, str) and kind.startswith("response.") and isinstance(event.get("sequence_number", 0), int):
        return "openai-responses"
    if kind in _ANTHROPIC_EVENTS:
        return "anthropic"
    if isinstance(event.get("candidates"), list) or "usageMetadata" in event:
        return "gemini"
    if kind in _UI_CHUNKS or (isinstance(kind, str) and kind.startswith("data-") and "data" in event):
        return "ai-sdk-ui"
    return None


def stream_event(data: Any) -> bool:
    """Whether a record is one event of a stream (a chunk, a Messages or Responses event)."""
    return _provider(data) in ("openai-chat", "openai-responses", "anthropic")


def _rides_along(event: Any) -> bool:
    """An event of no provider's own shape that streams carry: Azure's prompt_filter_results chunk
    (`choices: []`), an `error` event (Anthropic's, the Responses API's), a `ping`."""
    return isinstance(event, dict) and ("prompt_filter_results" in event and event.get("choices") == []
                                        or event.get("type") in ("error", "ping"))


def _is_gemini_stream(payloads: list) -> bool:
    """Gemini chunks, not a file of whole responses: at least two that share a responseId."""
    ids = [p.get("responseId") for p in payloads if isinstance(p, dict)]
    return len(ids) > 1 and ids[0] is not None and ids[0] == ids[1]


def _items(events: list) -> Iterator:
    """The file in order: ("stream", [(line, event), ...]) for each stream, ("record", line,
    payload, bytes) for a line that is no stream's, and the Problems of lines left out. A new
    stream starts where its provider's first event is; what rides along goes with the stream it
    is in (or, before any, with the next)."""
    current: list = []
    known = None  # the stream's last event of a provider's
    for event in events:
        if isinstance(event, Problem):
            yield event
            continue
        line, payload, raw = event
        provider = _provider(payload)
        if provider is None and not _rides_along(payload):
            if known is not None:
                yield "stream", current
                current, known = [], None
            yield "record", line, payload, raw
            continue
        if provider is not None and known is not None and _starts_a_stream(known, payload):
            yield "stream", current
            current, known = [], None
        current.append((line, payload))
        if provider is not None:
            known = payload
    if known is not None:
        yield "stream", current
    elif current:  # only what rides along: each a record of its own
        for line, payload in current:
            yield "record", line, payload, None


def _starts_a_stream(before: dict, event: dict) -> bool:
    provider = _provider(event)
    if provider != _provider(before):
        return True
    if provider == "anthropic":
        return event.get("type") == "message_start"
    if provider == "openai-responses":
        return event.get("type") == "response.created"
    if provider == "openai-chat":
        return event.get("id") != before.get("id")
    if provider == "ai-sdk-ui":
        return event.get("type") == "start"
    return event.get("responseId") != before.get("responseId")
