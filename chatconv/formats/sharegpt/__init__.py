"""ShareGPT conversations, as LLaMA-Factory, Axolotl and FastChat keep fine-tuning data:
`{"conversations": [{"from": TAG, "value": TEXT}, ...], "system"?: TEXT, "tools"?: ..., ...}`.

Each turn is one model message: `human` (or `user`) a user message, `gpt` (or `assistant`) an
assistant message, `system` a system message, `function_call` an assistant message of tool calls
(its value the JSON text of `{"name", "arguments"}`, or of a list of them), `observation` (or
`tool`) a tool message answering the earliest unanswered call. ShareGPT gives calls no id: each
gets `call_<turn>` (or `call_<turn>_<n>`), marked, and none is written back. A `system` column is
the first message, marked so that it goes back to the column; the record's other columns
(`tools`, `id`, `images`, ...) are the conversation's metadata; a turn's other fields stay on its
message. Export writes each message as a turn again: import then export gives the same JSON value.
"""

from __future__ import annotations

from typing import Any, Iterator

import orjson

from ...messages import unrecorded_input
from ...sources import NotWritten, Record, exact_json
from ..reading import Imported, Reading, kept, rest_of, string_value

NAME = "sharegpt"
TARGET = None  # no API's rules: a dataset's rows
KEYS = frozenset({"conversations"})

# Each tag's role, and the tag written for each role (LLaMA-Factory's defaults).
ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "system": "system",
         "function_call": "call", "observation": "tool", "tool": "tool"}
TAGS = {"user": "human", "assistant": "gpt", "system": "system", "call": "function_call", "tool": "observation"}
_MARKS = ("from", "noId", "column", "value", "list")


def detect(data: Any) -> bool:
    """A record whose `conversations` are turns of `from` and `value`."""
    turns = data.get("conversations") if isinstance(data, dict) else None
    return isinstance(turns, list) and bool(turns) and all(
        isinstance(turn, dict) and "from" in turn and "value" in turn for turn in turns)


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    messages, paths = [], []
    if "system" in data:
        messages.append(reading.keep({"role": "system", "content": string_value(data["system"])}, {"column": True}))
        paths.append(("system",))
    waiting: list[str] = []  # the ids of calls not yet answered, oldest first
    for index, turn in enumerate(data["conversations"]):
        path = ("conversations", index)
        tag = turn.get("from")
        role = ROLES.get(tag) if isinstance(tag, str) else None
        if role is None or not isinstance(turn.get("value"), str):
            what = f"a turn from {tag!r}" if role is None else "a turn whose value is not text"
            reading.error(path + (("from",) if role is None else ("value",)), f"{what} that chatconv cannot read",
                          f"ShareGPT turns are from {', '.join(ROLES)}, each with a text value", code="wrong-type")
            return
        own = {"from": tag if tag != TAGS[role] else None, **rest_of(turn, ("from", "value"))}
        if role == "call":
            message = _calls(turn["value"], index, reading, path, waiting)
            if message is None:
                return
        elif role == "tool":
            call_id = waiting.pop(0) if waiting else f"call_{index}"  # none waiting: an orphan, said by the importer
            message = {"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id, "toolName": "",
                                                    "output": {"type": "text", "value": turn["value"]}}]}
        else:
            message = {"role": role, "content": turn["value"]}
        messages.append(reading.keep(message, {key: value for key, value in own.items() if value is not None}))
        paths.append(path)
    yield Imported(None, messages, rest_of(data, ("conversations", "system")), paths)


def _calls(value: str, index: int, reading: Reading, path: tuple, waiting: list[str]) -> dict | None:
    """The assistant message of a function_call turn: one call, or a list of them."""
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        parsed = None
    calls = parsed if isinstance(parsed, list) else [parsed]
    if not calls or not all(isinstance(c, dict) and isinstance(c.get("name"), str) and "arguments" in c for c in calls):
        reading.error(path + ("value",), "a function_call turn whose value is not the JSON text of "
                      '{"name", "arguments"} (or of a list of them)', code="wrong-type")
        return None
    parts = []
    for number, call in enumerate(calls):
        call_id = f"call_{index}" if len(calls) == 1 else f"call_{index}_{number}"
        waiting.append(call_id)
        parts.append({"type": "tool-call", "toolCallId": call_id, "toolName": call["name"], "input": call["arguments"],
                      "providerOptions": {NAME: {"noId": True, **rest_of(call, ("name", "arguments"))}}})
    message = {"role": "assistant", "content": parts}
    # The value as written, when writing the calls again would not give these bytes back.
    try:
        written = _calls_text(parts, isinstance(parsed, list))
    except NotWritten as exc:
        reading.error(path + ("value",), f"a function_call value that chatconv cannot write back: {exc}", exc.hint,
                      code="not-written")
        return None
    if written != value:
        reading.keep(message, {"value": value})
    if isinstance(parsed, list):
        reading.keep(message, {"list": True})
    return message


def _calls_text(parts: list[dict], as_list: bool) -> str:
    calls = [{"name": p["toolName"], "arguments": p.get("input", {}),
              **{k: v for k, v in kept(p, NAME).items() if k != "noId"}} for p in parts]
    return exact_json(calls if as_list else calls[0]).decode()  # NotWritten when nested too deep


def quick_lines(record: Record, conversation_id: str) -> tuple[list[bytes], dict[str, str]] | None:
    """The step lines of a record of the common shapes (turns of the default tags human, gpt,
    system, function_call and observation, each only `from` and `value`, its value text, each
    observation answering a call; a text `system` column), made in one pass as read() and the
    importer would make them (a property test holds them equal), and its calls' names by id;
    None for any other record, which the full path reads."""
    data = record.data
    if record.error or record.problems or type(data) is not dict:
        return None
    turns = data.get("conversations")
    if type(turns) is not list or not turns:
        return None
    steps: list[dict] = []
    output: list[dict] | None = None  # the step's output, once a step is open
    if "system" in data:
        if type(data["system"]) is not str:
            return None
        output = []
        column = {"role": "system", "content": data["system"], "providerOptions": {NAME: {"column": True}}}
        steps.append({"conversationId": conversation_id, "stepIndex": 0, "input": column, "output": output})
    waiting: list[tuple[str, str]] = []  # (id, name) of the calls not yet answered, oldest first
    names: dict[str, str] = {}
    for index, turn in enumerate(turns):
        if type(turn) is not dict or len(turn) != 2:
            return None
        tag, value = turn.get("from"), turn.get("value")
        if type(value) is not str or type(tag) is not str:
            return None
        role = _QUICK_ROLES.get(tag)
        if role is not None and role != "assistant":  # a user or system message opens a step
            output = []
            steps.append({"conversationId": conversation_id, "stepIndex": len(steps),
                          "input": {"role": role, "content": value}, "output": output})
            continue
        if role is not None:
            message = {"role": role, "content": value}
        elif tag == "function_call":
            message = _quick_calls(value, index, waiting, names)
            if message is None:
                return None
        elif tag == "observation" and waiting:  # (none waiting: an orphan, which the full path refuses)
            call_id, name = waiting.pop(0)
            message = {"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id,
                                                    "toolName": name, "output": {"type": "text", "value": value}}]}
        else:
            return None
        if output is None:  # the model speaks first: a step whose input was not recorded
            output = []
            steps.append({"conversationId": conversation_id, "stepIndex": 0, "input": unrecorded_input(),
                          "output": output})
        output.append(message)
    if len(data) > 1 + ("system" in data):
        steps[0]["metadata"] = {NAME: rest_of(data, ("conversations", "system"))}
    try:
        return [exact_json(step, record.text) for step in steps], names
    except NotWritten:  # too deep, an integer beyond 64 bits: the full path says so
        return None


def _quick_calls(value: str, index: int, waiting: list, names: dict) -> dict | None:
    """A function_call turn's message as _calls makes it, for calls of only a name and arguments."""
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    listed = type(parsed) is list
    calls = parsed if listed else (parsed,)
    if not calls:
        return None
    parts = []
    name_first = True  # each call's name before its arguments, as export writes them
    for number, call in enumerate(calls):
        if type(call) is not dict or len(call) != 2 or "arguments" not in call:
            return None
        name = call.get("name")
        if type(name) is not str or not name:
            return None
        name_first = name_first and next(iter(call)) == "name"
        call_id = f"call_{index}" if len(calls) == 1 else f"call_{index}_{number}"
        waiting.append((call_id, name))
        names[call_id] = name
        parts.append({"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": call["arguments"],
                      "providerOptions": {NAME: {"noId": True}}})
    message: dict = {"role": "assistant", "content": parts}
    marks = {}
    # As written when compact with name first (what export writes): the calls' own text, no mark.
    try:
        compact = name_first and orjson.dumps(parsed) == value.encode()
        if not compact and _calls_text(parts, listed) != value:
            marks["value"] = value
    except (orjson.JSONEncodeError, NotWritten):  # deeper than orjson writes: the full path says so
        return None
    if listed:
        marks["list"] = True
    if marks:
        message["providerOptions"] = {NAME: marks}
    return message


_QUICK_ROLES = {"human": "user", "gpt": "assistant", "system": "system"}


# ---------------------------------------------------------------------------------------------
# Writing a record


def write(messages: list[dict], metadata: dict, gather_tools: bool = False, notes: list | None = None) -> dict:
    """A ShareGPT record: each message a turn (a system message marked as the column goes back
    to it), then the record's other columns. What a turn cannot hold is left out, noted in
    `notes` as (message index, code, what): images and files, reasoning."""
    notes = notes if notes is not None else []
    record: dict[str, Any] = {"conversations": []}
    for index, message in enumerate(messages):
        own = kept(message, NAME)
        extra = {key: value for key, value in own.items() if key not in _MARKS}
        role = message["role"]
        if role == "system" and own.get("column"):
            record["system"] = message["content"]
            continue
        for kind, value in _turns(message, index, notes):
            tag = own.get("from") if isinstance(own.get("from"), str) and ROLES.get(own["from"]) == kind else TAGS[kind]
            record["conversations"].append({"from": tag, "value": value, **extra})
    return {**record, **metadata}


def _turns(message: dict, index: int, notes: list) -> list[tuple[str, str]]:
    """(role of the turn, its value) of each turn a message makes."""
    role, content, own = message["role"], message["content"], kept(message, NAME)
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if role == "tool":
        return [("tool", _result_text(part)) for part in parts if part["type"] == "tool-result"]
    texts, calls = [], []
    for part in parts:
        if part["type"] == "text":
            texts.append(part["text"])
        elif part["type"] == "tool-call":
            calls.append(part)
        elif part["type"] != "tool-result":
            notes.append((index, "part-left-out", f"a {part['type']} part is left out (a ShareGPT turn holds text)"))
    turns = []
    if texts or not calls:
        turns.append((role, "\n".join(texts)))
    if calls:
        written = own.get("value")
        as_list = bool(own.get("list")) or len(calls) > 1
        if not (isinstance(written, str) and _same_calls(written, calls, as_list)):
            written = _calls_text(calls, as_list)
        turns.append(("call", written))
    return turns


def _same_calls(value: str, calls: list[dict], as_list: bool) -> bool:
    """Whether `value` (a function_call turn's text as read) still says these calls."""
    try:
        return orjson.loads(value) == orjson.loads(_calls_text(calls, as_list))
    except orjson.JSONDecodeError:
        return False


def _result_text(part: dict) -> str:
    value = part["output"].get("value")
    return value if isinstance(value, str) else exact_json(value).decode()  # NotWritten when nested too deep
