"""Recorded conversations as steps: either line style, other field names, legacy shapes read as
current ones; and what is made of them (dataset items, API request bodies, and back from logs).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import reduce
from operator import getitem
from pathlib import Path
from typing import Any, Iterator, Mapping

import orjson

from .messages import (ToolPairing, extract_text_from_message, extract_text_from_messages,
                       normalize_output, step_messages)
from .problems import ChatconvError, Problem
from .sources import NotWritten, Record, exact_json, iter_records, problem_at
from .validate import check_schema, step_facts

STEP_FIELDS = ("conversationId", "stepIndex", "input", "output", "id", "timestamp", "metadata")
CONVERSATION_FIELDS = ("id", "steps")
FIELD_NAMES = tuple(dict.fromkeys(STEP_FIELDS + CONVERSATION_FIELDS))


def parse_field_map(pairs: list[str]) -> dict[str, str]:
    """`["output=response"]` -> {"output": "response"}: the step's field is read from another key.

    ValueError for a pair that is not NAME=KEY with NAME a chatconv field, and for a NAME or a
    KEY given twice (one of the two mappings would be lost).
    """
    field_map: dict[str, str] = {}
    for pair in pairs:
        name, _, key = pair.partition("=")
        if not key or name not in FIELD_NAMES:
            raise ValueError(f"{pair!r} is not NAME=KEY with NAME one of: {', '.join(FIELD_NAMES)}")
        if name in field_map:
            raise ValueError(f"{name} is mapped twice ({name}={field_map[name]}, {pair})")
        if key in field_map.values():
            raise ValueError(f"the key {key!r} is mapped twice: each key can be read as one field only")
        field_map[name] = key
    return field_map


class FieldClash(ValueError):
    """A mapped field's name is already a key of the record: renaming would hide one of the two."""

    def __init__(self, path: tuple, name: str, key: str):
        super().__init__(f"--field {name}={key}: the record has both {key!r} and {name!r}")
        self.path = path


def adapt(data: Any, field_map: Mapping[str, str], path: tuple = ()) -> Any:
    """A record with mapped fields renamed to their chatconv names; other keys kept, in order.

    FieldClash when a key would be renamed to a name the record already has (and keeps).
    """
    if not field_map or not isinstance(data, dict):
        return data
    renamed = {key: name for name, key in field_map.items()}
    for name, key in field_map.items():
        # A name whose own key is renamed away (a swap, or name=name) leaves room for the new one.
        if key in data and name in data and name not in renamed:
            raise FieldClash(path + (name,), name, key)
    adapted = {renamed.get(key, key): value for key, value in data.items()}
    steps = adapted.get("steps")
    if isinstance(steps, list):
        written_as = next(key for key in data if renamed.get(key, key) == "steps")  # where problems point
        adapted["steps"] = [adapt(step, field_map, path + (written_as, index)) for index, step in enumerate(steps)]
    return adapted


@dataclass
class Step:
    """One step of a recording, with where it came from."""

    record: Record
    conversation_id: Any
    step: dict
    path: tuple  # of the step within its record


def iter_recording_steps(path: str | Path, field_map: Mapping[str, str] | None = None,
                         problems: list[Problem] | None = None) -> Iterator[Step]:
    """Every step of a step-per-line or conversation-per-line file, in file order, streamed.

    Legacy shapes are upgraded in memory. A record that is broken or invalid is skipped and its
    problems appended to `problems` (raised as ChatconvError when no list is given).
    """
    for record in iter_records(path):
        try:
            record.data = adapt(record.data, field_map or {})
        except FieldClash as exc:
            record.error = problem_at(record, exc.path, str(exc), hint="map only keys whose field name the "
                                      "record does not use, or leave that --field out")
        found = [record.error] if record.error else _check(record)
        if problems is None and found:
            raise ChatconvError(found)
        if found:
            problems.extend(found)
            continue
        if "steps" in record.data:
            for index, step in enumerate(record.data["steps"]):
                yield Step(record, record.data["id"], step, ("steps", index))
        else:
            yield Step(record, record.data.get("conversationId"), record.data, ())


def _check(record: Record) -> list[Problem]:
    if not isinstance(record.data, dict):
        return [problem_at(record, (), "a recording line must be a JSON object (a step or a conversation)")]
    kind = "conversation" if "steps" in record.data else "step-record"
    # Only schema faults stop a record here; pairing is reported by the commands themselves.
    return [p for p in check_schema(record, kind) if p.is_error]


def step_text(step: dict) -> str:
    """The text of a step's whole output array."""
    return extract_text_from_messages(normalize_output(step["output"]))


def dataset_item(item: Step) -> dict:
    """The dataset item of a step read from a file. A step without a conversationId is taken as
    a step of the file's own conversation: the file's name without its suffix ("stdin" for
    standard input) stands for the conversation id."""
    conversation_id = item.conversation_id
    if conversation_id is None:
        conversation_id = "stdin" if item.record.file == "-" else Path(item.record.file).stem
    return step_to_dataset_item(conversation_id, item.step)


def step_to_dataset_item(conversation_id: Any, step: dict) -> dict:
    """{id: "<conversation id>-step-<i>", prompt, completion, metadata} (SPEC §5)."""
    return {"id": f"{conversation_id}-step-{step['stepIndex']}",
            "prompt": extract_text_from_message(step["input"]),
            "completion": step_text(step),
            "metadata": step.get("metadata", {})}


def conversation_to_dataset(conversation: dict) -> list[dict]:
    return [step_to_dataset_item(conversation["id"], step) for step in conversation["steps"]]


def step_row_json(item: Step, row: dict) -> bytes:
    """A row made of one step, as JSON; ChatconvError at the step when it cannot be written exactly."""
    try:
        return exact_json(row, item.record.text)
    except NotWritten as exc:
        raise ChatconvError(problem_at(item.record, item.path, f"step left out: {exc}", hint=exc.hint)) from None


def tool_parts(item: Step) -> Iterator[tuple[tuple, dict]]:
    """(path in its record, part) of each tool-call and tool-result part of a step, in order."""
    _, parts = step_facts(item.step, None)
    for _, _, path in parts or ():
        yield item.path + path, reduce(getitem, path, item.step)


def unwritten_tool_calls(item: Step) -> Iterator[tuple[str, Problem]]:
    """(toolCallId, problem) for each call or result of a step whose value `tools` cannot write
    exactly (see exact_json): that call's row is left out."""
    for path, part in tool_parts(item):
        # A row holds the call's stepIndex and args, and its result's value, one level down.
        if part["type"] == "tool-call":
            values = ((item.step["stepIndex"], item.path + ("stepIndex",)), ([part["input"]], path + ("input",)))
        else:
            values = (([part["output"].get("value")], path + ("output", "value")),)
        for value, spot in values:
            try:
                exact_json(value, item.record.text)
            except NotWritten as exc:
                yield part["toolCallId"], problem_at(item.record, spot, f"tool call {part['toolCallId']!r} "
                                                     f"left out: {exc}", hint=exc.hint)
                break


class ConversationPairings:
    """Tool pairing per conversation for a stream of steps, within a window of recent ones.

    Conversations are flushed (their calls become final) when they fall out of the window of the
    `window` most recently active ones, and at the end: memory stays flat in file size. Results
    that answer no call, and repeated call ids, are appended to `problems` as they are found.
    """

    def __init__(self, window: int = 10_000, problems: list[Problem] | None = None):
        self.window = window
        self.problems = [] if problems is None else problems
        self._active: OrderedDict[Any, ToolPairing] = OrderedDict()

    def add(self, item: Step) -> Iterator[tuple[Any, ToolPairing]]:
        pairing = self._active.pop(item.conversation_id, None) or ToolPairing()
        self._active[item.conversation_id] = pairing
        orphans, duplicates = len(pairing.orphans), len(pairing.duplicates)
        pairing.add_step(item.step)
        # Worded as validate words them, and located at the part (the step's last one of that id).
        for _, result in pairing.orphans[orphans:]:
            self.problems.append(problem_at(
                item.record, _part_path(item, "tool-result", result["toolCallId"]),
                f"tool-result {result['toolCallId']!r} answers no earlier tool-call",
                hint="a tool result must follow the tool-call with the same toolCallId"))
        for _, call in pairing.duplicates[duplicates:]:
            self.problems.append(problem_at(
                item.record, _part_path(item, "tool-call", call["toolCallId"]),
                f"duplicate toolCallId {call['toolCallId']!r}", "warning", "each tool call should have its own id"))
        while len(self._active) > self.window:
            yield self._active.popitem(last=False)

    def finish(self) -> Iterator[tuple[Any, ToolPairing]]:
        while self._active:
            yield self._active.popitem(last=False)


def _part_path(item: Step, kind: str, call_id: str) -> tuple:
    paths = [path for path, part in tool_parts(item) if part["type"] == kind and part["toolCallId"] == call_id]
    return paths[-1] + ("toolCallId",)


# ---------------------------------------------------------------------------------------------
# Payloads both ways


def conversation_messages(steps: list[dict]) -> list[dict]:
    """A conversation's messages in order (each step's input, then its outputs), for replay."""
    return [message for step in steps for message in step_messages({**step, "output": normalize_output(step["output"])})]


def from_openai_messages(messages: list[dict]) -> list[dict]:
    """An OpenAI-format chat log (tool_calls, tool messages) as AI SDK model messages."""
    names: dict[str, str] = {}
    out = []
    for index, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role == "tool":
            call_id = message.get("tool_call_id")
            out.append({"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id,
                                                     "toolName": names.get(call_id, ""),
                                                     "output": {"type": "text", "value": content or ""}}]})
        elif role == "assistant" and message.get("tool_calls"):
            parts = [{"type": "text", "text": content}] if content is not None else []
            for call in message["tool_calls"]:
                names[call["id"]] = call["function"]["name"]
                parts.append({"type": "tool-call", "toolCallId": call["id"], "toolName": call["function"]["name"],
                              "input": _arguments(call["function"].get("arguments", "{}"), index)})
            out.append({"role": "assistant", "content": parts})
        elif isinstance(content, list):
            out.append({"role": role, "content": [_from_openai_part(p) for p in content]})
        else:
            out.append({"role": role, "content": content})
    return out


def _arguments(text: str, index: int) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        raise ChatconvError(Problem("<openai log>", None, None, f"$[{index}].tool_calls",
                                    "tool call arguments are not valid JSON", "error",
                                    "arguments must be a JSON string of the call's input")) from None


def _from_openai_part(part: dict) -> dict:
    if part.get("type") == "image_url":
        return {"type": "image", "image": part["image_url"]["url"]}
    if part.get("type") == "file":
        file = {"type": "file", "data": part["file"]["file_data"], "mediaType": "application/octet-stream"}
        if "filename" in part["file"]:
            file["filename"] = part["file"]["filename"]
        return file
    return {"type": "text", "text": part.get("text", "")}
