"""AgentV run bundles: each sample's folder (`<run>/<test>--<hash>/sample-N/`) holds the
transcript AgentV normalised (`transcript.json`), its rows (`transcript-raw.jsonl`), and what
the run made of it (`result.json`, `grading.json`, `metrics.json`).

`transcript.json` (`agentv.normalized_transcript.v1`) is one conversation, named by its test
folder and sample (`fizzbuzz--c6cd8f9f52ad/sample-1`): its turns (system, user, assistant) are
messages; text blocks text, thinking blocks reasoning, image blocks images, and tool_use blocks
tool calls whose `result` becomes the tool message after the turn. `result.json`, `grading.json`
and `metrics.json` beside it are the conversation's metadata (with the transcript's own fields),
and are not read as records of their own, nor is any other file of a run's layout (summaries,
the test's targets, answers, the run's index). `transcript-raw.jsonl` (`agentv.transcript.v1` rows, a message each,
tool calls with their output inline) is read, as one conversation, when no transcript.json is
beside it. A turn's, a row's and a block's other fields stay under providerOptions["agentv-run"].
"""

from __future__ import annotations

import functools
import os
from typing import Any, Iterator

import orjson

from ...sources import Record, iter_records
from ..reading import Imported, Reading, rest_of
from ..session_files import whole_file_records

NAME = "agentv-run"
KEYS = frozenset({"schema_version"})
TRANSCRIPT, RAW = "transcript.json", "transcript-raw.jsonl"
NORMALIZED, ROWS = "agentv.normalized_transcript.", "agentv.transcript."
BESIDE = ("result.json", "grading.json", "metrics.json")  # a sample's files read as its metadata


def claims(file: str) -> bool:
    """A sample's transcripts, and every other file of a run's layout (the files read as a
    transcript's metadata, summaries, the test's targets, answers, the run's index), which give no record."""
    name, folder = os.path.basename(file), os.path.dirname(file)
    if name in (TRANSCRIPT, RAW):
        return True
    if name in BESIDE and any(os.path.isfile(os.path.join(folder, other)) for other in (TRANSCRIPT, RAW)):
        return True
    return _in_run(folder)


def _in_run(folder: str) -> bool:
    """Whether a folder is in a run's layout: a sample's (`sample-N` in a `<test>--<hash>`
    folder), a test's, the run's (holding tests), or one below a sample's or the run's."""
    for _ in range(3):
        name, parent = os.path.basename(folder), os.path.dirname(folder)
        if name.startswith("sample-") and "--" in os.path.basename(parent):
            return True
        if "--" in name and _holds_samples(folder):
            return True
        if any("--" in entry and _holds_samples(os.path.join(folder, entry)) for entry in _entries(folder)):
            return True
        folder = parent
    return False


@functools.lru_cache(maxsize=256)
def _entries(folder: str) -> tuple[str, ...]:
    """A folder's entries, once per folder of an import (claims asks it for each file in it)."""
    try:
        return tuple(os.listdir(folder or "."))
    except OSError:
        return ()


def _holds_samples(folder: str) -> bool:
    return any(entry.startswith("sample-") and os.path.isdir(os.path.join(folder, entry)) for entry in _entries(folder))


def records(file: str) -> Iterator[Record]:
    name, folder = os.path.basename(file), os.path.dirname(file)
    if name not in (TRANSCRIPT, RAW) or (name == RAW and os.path.isfile(os.path.join(folder, TRANSCRIPT))):
        return iter(())  # read with the sample's transcript, or about the run
    return whole_file_records(file) if name == RAW else iter_records(file)


def detect(data: Any) -> bool:
    """A normalised transcript, a transcript's rows (a list), or one row."""
    if isinstance(data, list):
        return bool(data) and all(_is_row(row) for row in data)
    return isinstance(data, dict) and (_is_row(data) or (
        str(data.get("schema_version", "")).startswith(NORMALIZED) and isinstance(data.get("turns"), list)))


def _is_row(data: Any) -> bool:
    return isinstance(data, dict) and str(data.get("schema_version", "")).startswith(ROWS) and "role" in data


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    rows = data if isinstance(data, list) else [data] if _is_row(data) else None
    messages, paths = _rows(rows, reading) if rows is not None else _turns(data, reading)
    if reading.failed:
        return
    metadata = rest_of(data, ("turns",)) if rows is None else {}
    metadata.update(_beside(reading))
    yield Imported(_sample(reading.record.file, rows), messages, metadata, paths)


def _sample(file: str, rows: list | None) -> str | None:
    """`<test folder>/<sample folder>` of a file in a run's layout; else the rows' session, or none."""
    parts = os.path.normpath(file).split(os.sep)
    if len(parts) >= 3 and parts[-2].startswith("sample-"):
        return f"{parts[-3]}/{parts[-2]}"
    source = rows[0].get("source") if rows and isinstance(rows[0].get("source"), dict) else {}
    return source.get("session_id") if isinstance(source.get("session_id"), str) else None


def _beside(reading: Reading) -> dict:
    """result.json, grading.json and metrics.json of the transcript's folder, by name."""
    folder, found = os.path.dirname(reading.record.file), {}
    for name in BESIDE:
        path = os.path.join(folder, name)
        if reading.record.file == "-" or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as stream:
                found[name.removesuffix(".json")] = orjson.loads(stream.read())
        except (OSError, orjson.JSONDecodeError) as exc:
            reading.warn((), f"{name} beside the transcript cannot be read ({exc}): left out of its metadata",
                         code="import-changed")
    return found


def _turns(data: dict, reading: Reading) -> tuple[list[dict], list[tuple]]:
    turns = data.get("turns")
    if not isinstance(turns, list):
        reading.error(("turns",), "a normalised transcript holds `turns`, a list", code="wrong-type")
        return [], []
    messages, paths = [], []
    for index, turn in enumerate(turns):
        path = ("turns", index)
        role = turn.get("type") if isinstance(turn, dict) else None
        if role not in ("system", "user", "assistant") or not isinstance(turn.get("content"), list):
            reading.error(path, "a turn is {type: system, user or assistant, content: [blocks]}", code="wrong-type")
            return [], []
        parts, results = [], []
        for number, block in enumerate(turn["content"]):
            part = _block(block, reading, path + ("content", number))
            if part is None:
                return [], []
            parts.append(part)
            result = block.get("result")
            if part["type"] == "tool-call" and isinstance(result, dict):
                results.append(_result(part, result.get("output"), result.get("status"), rest_of(result, ("output",)),
                                       reading))
            elif part["type"] == "tool-call" and "result" in block:  # a result of another shape, kept as written
                reading.keep(part, {"result": result})
        if role == "system":
            message = {"role": "system", "content": "\n".join(p.get("text", "") for p in parts)}
            plain = len(parts) == 1 and parts[0]["type"] == "text" and "providerOptions" not in parts[0]
            reading.keep(message, {"blocks": None if plain else turn["content"]})
        else:
            message = {"role": role, "content": parts}
        messages.append(reading.keep(message, {}, rest_of(turn, ("type", "content"))))
        paths.append(path)
        if results:
            messages.append({"role": "tool", "content": results})
            paths.append(path)
    return messages, paths


def _block(block: Any, reading: Reading, path: tuple) -> dict | None:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind in ("text", "thinking") and isinstance(block.get("text"), str):
        return reading.keep({"type": "text" if kind == "text" else "reasoning", "text": block["text"]}, {},
                            rest_of(block, ("type", "text")))
    if kind == "tool_use" and isinstance(block.get("id"), str) and isinstance(block.get("tool_name", block.get("name")), str):
        name = block.get("tool_name", block.get("name"))
        return reading.keep({"type": "tool-call", "toolCallId": block["id"], "toolName": name,
                             "input": block.get("input", {})}, {},
                            rest_of(block, ("type", "id", "tool_name", "input", "result")))
    if kind == "image" and isinstance(block.get("source"), str):
        return reading.keep({"type": "image", "image": block["source"], **(
            {"mediaType": block["mime_type"]} if isinstance(block.get("mime_type"), str) else {})}, {},
            rest_of(block, ("type", "source", "mime_type")))
    reading.error(path, f"a block of type {kind!r} chatconv cannot read",
                  "transcript blocks are text, thinking, image and tool_use", code="wrong-type")
    return None


def _result(call: dict, output: Any, status: Any, rest: dict, reading: Reading) -> dict:
    error = status in ("error", "cancelled")
    kind = ("error-text" if error else "text") if isinstance(output, str) else ("error-json" if error else "json")
    return reading.keep({"type": "tool-result", "toolCallId": call["toolCallId"], "toolName": call["toolName"],
                         "output": {"type": kind, "value": output}}, {"noOutput": True if output is None else None},
                        rest)


def _rows(rows: list, reading: Reading) -> tuple[list[dict], list[tuple]]:
    messages, paths = [], []
    many = reading.data is rows
    for index, row in enumerate(rows):
        path = (index,) if many else ()
        role, content = row.get("role"), row.get("content")
        if role not in ("system", "user", "assistant") or not (content is None or isinstance(content, str)):
            reading.error(path, "a transcript row is {role: system, user or assistant, content: text or none, "
                          "tool_calls?}", code="wrong-type")
            return [], []
        calls = row.get("tool_calls") or []
        if not isinstance(calls, list):
            reading.error(path + ("tool_calls",), "a row's tool_calls are a list", code="wrong-type")
            return [], []
        parts: list[dict] = [{"type": "text", "text": content}] if content else []
        results = []
        for number, call in enumerate(calls if isinstance(calls, list) else []):
            if not (isinstance(call, dict) and isinstance(call.get("tool"), str)):
                reading.error(path + ("tool_calls", number), "a tool call names its tool", code="wrong-type")
                return [], []
            named = isinstance(call.get("id"), str) and call["id"]
            call_id = call["id"] if named else f"call_{index}_{number}"
            part = reading.keep({"type": "tool-call", "toolCallId": call_id, "toolName": call["tool"],
                                 "input": call.get("input", {})}, {"noId": True if "id" not in call else None},
                                rest_of(call, ("tool", "input", "output") + (("id",) if named else ())))
            parts.append(part)
            if "output" in call:
                results.append(_result(part, call["output"], call.get("status"), {}, reading))
        known = ("role", "content", "tool_calls")
        if role == "system":
            message: dict = {"role": "system", "content": content or ""}
        else:
            message = {"role": role, "content": content if role == "user" and not calls else parts}
        messages.append(reading.keep(message, {"noContent": True if "content" not in row else None},
                                     rest_of(row, known)))
        paths.append(path)
        if results:
            messages.append({"role": "tool", "content": results})
            paths.append(path)
    return messages, paths
