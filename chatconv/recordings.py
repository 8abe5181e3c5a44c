"""Recorded conversations as steps: either line style, other field names, legacy shapes read as
current ones; and what is made of them (dataset items, API request bodies, and back from logs).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import orjson

from .messages import (ToolPairing, extract_text_from_message, extract_text_from_messages,
                       normalize_output, step_messages)
from .problems import ChatconvError, Problem
from .sources import Record, iter_records, problem_at
from .validate import check_schema

STEP_FIELDS = ("conversationId", "stepIndex", "input", "output", "id", "timestamp", "metadata")
CONVERSATION_FIELDS = ("id", "steps")


def parse_field_map(pairs: list[str]) -> dict[str, str]:
    """`["output=response"]` -> {"output": "response"}: the step's field is read from another key."""
    field_map = {}
    for pair in pairs:
        name, _, source = pair.partition("=")
        if not source or name not in STEP_FIELDS + CONVERSATION_FIELDS:
            raise ChatconvError(Problem(
                "--field", None, None, "$", f"bad field mapping {pair!r}", "error",
                f"write FIELD=SOURCE_KEY with FIELD one of: {', '.join(dict.fromkeys(STEP_FIELDS + CONVERSATION_FIELDS))}"))
        field_map[name] = source
    return field_map


def adapt(data: Any, field_map: Mapping[str, str]) -> Any:
    """A record with mapped fields renamed to their chatconv names, in place; other keys kept."""
    if not field_map or not isinstance(data, dict):
        return data
    renamed = {source: name for name, source in field_map.items()}
    adapted = {renamed.get(key, key): value for key, value in data.items()}
    steps = adapted.get("steps")
    if isinstance(steps, list):
        adapted["steps"] = [adapt(step, field_map) for step in steps]
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
        record.data = adapt(record.data, field_map or {})
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


def step_to_dataset_item(conversation_id: Any, step: dict) -> dict:
    """{id: "<conversation id>-step-<i>", prompt, completion, metadata} (SPEC §5)."""
    return {"id": f"{conversation_id}-step-{step['stepIndex']}",
            "prompt": extract_text_from_message(step["input"]),
            "completion": step_text(step),
            "metadata": step.get("metadata", {})}


def conversation_to_dataset(conversation: dict) -> list[dict]:
    return [step_to_dataset_item(conversation["id"], step) for step in conversation["steps"]]


class ConversationPairings:
    """Tool pairing per conversation for a stream of steps, within a window of recent ones.

    Conversations are flushed (their calls become final) when they fall out of the window of the
    `window` most recently active ones, and at the end: memory stays flat in file size.
    """

    def __init__(self, window: int = 10_000):
        self.window = window
        self._active: OrderedDict[Any, ToolPairing] = OrderedDict()

    def add(self, conversation_id: Any, step: dict) -> Iterator[tuple[Any, ToolPairing]]:
        pairing = self._active.pop(conversation_id, None) or ToolPairing()
        self._active[conversation_id] = pairing
        pairing.add_step(step)
        while len(self._active) > self.window:
            yield self._active.popitem(last=False)

    def finish(self) -> Iterator[tuple[Any, ToolPairing]]:
        while self._active:
            yield self._active.popitem(last=False)


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
