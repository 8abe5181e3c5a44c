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
from ..sources.files import is_regular_file
from ..sources.text import open_binary, read_whole

SUFFIXES = (".sse",)  # a folder's stream files; a stream under any other name is told from its lines
# How far into a file to look to tell a stream: its first events are within it.
_PEEK_BYTES = 64 * 1024

_ANTHROPIC_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                               "message_delta", "message_stop", "ping"})
# The event that ends each provider's stream; a stream without it was cut short.
_ENDS = {"anthropic": lambda e: e.get("type") == "message_stop",
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
    error = event.get("error")
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
        except ValueError:
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
    return event.get("responseId") != before.get("responseId")


# --- OpenAI chat: chunks -> a chat.completion ----------------------------------------------------


def _openai_chat(chunks: list[dict], notes: list[str]) -> dict:
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
                    choice[key] = _joined(choice.get(key), value)  # logprobs: each chunk's tokens, in order
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
            message[key] = _joined(message.get(key), value)  # audio: its data and transcript come in pieces


# Fields that come in pieces: a stream's chunks each carry the next part of them.
_PIECES = frozenset({"data", "transcript", "content", "refusal", "citationSources", "citations"})


def _joined(before: Any, piece: Any) -> Any:
    """A field of a stream's chunks as the whole response has it: objects merged key by key, the
    lists of their pieces (logprobs' tokens, citation sources) joined, the strings of an audio
    answer (data, transcript) joined; anything else is the last chunk's."""
    if isinstance(before, dict) and isinstance(piece, dict):
        merged = dict(before)
        for key, value in piece.items():
            if key in merged and isinstance(value, (list, str)) and type(merged[key]) is type(value) and key in _PIECES:
                merged[key] = merged[key] + value
            else:
                merged[key] = _joined(merged.get(key), value)
        return merged
    return piece


# --- Responses: events -> the response ----------------------------------------------------------


def _openai_responses(events: list[dict], notes: list[str]) -> dict:
    done = [e["response"] for e in events if e.get("type") in ("response.completed", "response.incomplete",
                                                                  "response.failed") and isinstance(e.get("response"), dict)]
    if done:
        return done[-1]  # the whole response, as the API gives it at the end of the stream
    # No end (cut short, or an error): the items as far as they came, from their added and done
    # events, their text and arguments from the deltas.
    started = next((e["response"] for e in events if isinstance(e.get("response"), dict)), {})
    items: dict[int, dict] = {}
    for event in events:
        kind, index = event.get("type"), event.get("output_index", 0)
        if kind in ("response.output_item.added", "response.output_item.done") and isinstance(event.get("item"), dict):
            items[index] = copy.deepcopy(event["item"])
        elif kind == "response.content_part.added" and isinstance(event.get("part"), dict) and index in items:
            items[index].setdefault("content", []).append(copy.deepcopy(event["part"]))
        elif kind == "response.output_text.delta" and index in items and items[index].get("content"):
            part = items[index]["content"][event.get("content_index", -1)]
            part["text"] = part.get("text", "") + event.get("delta", "")
        elif kind == "response.function_call_arguments.delta" and index in items:
            items[index]["arguments"] = items[index].get("arguments", "") + event.get("delta", "")
    return {**started, "object": "response", "output": [items[index] for index in sorted(items)]}


# --- Anthropic: Messages events -> a message ----------------------------------------------------


def _anthropic(events: list[dict], notes: list[str]) -> dict:
    message: dict[str, Any] = {"type": "message", "role": "assistant", "content": []}
    blocks: dict[int, dict] = {}
    json_text: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message = {**copy.deepcopy(event["message"]), "content": []}
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            index = event.get("index", len(blocks))
            blocks[index] = {**copy.deepcopy(event["content_block"]), **blocks.get(index, {})}  # an early delta kept
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
        try:
            blocks[index]["input"] = orjson.loads(text) if text.strip() else {}
        except orjson.JSONDecodeError:  # cut short in the middle of a call's input: kept as it came
            blocks[index]["input"] = text
            notes.append(f"the input of tool call {blocks[index].get('id')!r} is cut short: kept as the text that came")
    message["content"] = [blocks[index] for index in sorted(blocks)]
    return message


# --- Gemini: chunks -> a response ---------------------------------------------------------------


def _gemini(chunks: list[dict], notes: list[str]) -> dict:
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
                    candidate[key] = _joined(candidate.get(key), value)  # citations of each chunk, in order
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
