"""What every format's reader shares: the record being read (where problems go, where the fields
with no place in a model message are kept) and the conversions every API needs (a tool call's
arguments, a tool result's output).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from ..problems import Problem
from ..sources import Record, exact_json, integers_beyond_64_bits, problem_at

STARTS_A_STEP = ("user", "system")  # the roles whose message opens a step of chatconv's recordings


@dataclass
class Imported:
    """One conversation read from a record, as AI SDK 5 model messages."""

    id: str | None  # from the source when it has one; else the importer names it after the record
    messages: list[dict]
    # Fields of the request (or log entry) outside any message: the model, tool definitions,
    # sampling settings. They go to the first step's metadata[format], whence export reads them.
    metadata: dict = field(default_factory=dict)
    paths: list[tuple] = field(default_factory=list)  # each message's JSON path in the data read, for problems


@dataclass
class Reading:
    """One record being read by a format: problems located in it, kept fields filed by format."""

    record: Record  # an element of an array of records is a Record of its own (sources.element_records)
    format: str
    problems: list[Problem] = field(default_factory=list)

    @property
    def data(self) -> Any:
        return self.record.data

    def warn(self, path: tuple, message: str, hint: str | None = None, code: str = "import-changed") -> None:
        """Something read differently from how it is written (the value is kept, changed or not)."""
        self.problems.append(problem_at(self.record, path, message, "warning", hint, code=code))

    def error(self, path: tuple, message: str, hint: str | None = None, code: str = "import-refused") -> None:
        """Something that cannot be read: the conversation it is in is not written."""
        self.problems.append(problem_at(self.record, path, message, "error", hint, code=code))

    @property
    def failed(self) -> bool:
        return any(p.is_error for p in self.problems)

    def keep(self, target: dict, fields: dict, rest: dict | None = None) -> dict:
        """`target` (a message or part) with `fields` (marks: a None is no mark) and `rest` (the
        source's own fields, nulls too) kept under providerOptions[format]; none: as it is."""
        fields = {key: value for key, value in fields.items() if value is not None} | (rest or {})
        if fields:
            options = target.setdefault("providerOptions", {})
            options.setdefault(self.format, {}).update(fields)
        return target


def kept(part: dict, format_name: str) -> dict:
    """What a format kept on a message or part (providerOptions[format]), or {}."""
    return (part.get("providerOptions") or {}).get(format_name) or {}


def rest_of(data: dict, known: tuple[str, ...] | set[str]) -> dict:
    """The keys of `data` that a reader does not turn into message fields, in their order."""
    return {key: value for key, value in data.items() if key not in known}


def tool_input(arguments: Any, reading: Reading, path: tuple) -> tuple[Any, dict]:
    """A tool call's input from its arguments, and what to keep to write them back as they were.

    A JSON string is parsed; a string holding JSON that is itself a JSON string of an object or
    array (arguments encoded twice) is decoded once more, with a warning; a string that is not
    JSON is kept as the input, with a warning and {"rawArguments": True} kept. An object (some
    logs store arguments parsed) is the input as it is.
    """
    if not isinstance(arguments, str):
        return arguments, {}
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        reading.warn(path, "tool call arguments are not JSON: kept as a string input",
                     "arguments are the JSON text of the call's input; this call's input is the text as it is",
                     code="arguments-not-json")
        return arguments, {"rawArguments": True}
    try:
        written = orjson.dumps(value)
    except orjson.JSONEncodeError:  # orjson reads 1024 levels and writes 255: the text stays as it is
        reading.warn(path, "tool call arguments nest deeper than the 255 levels chatconv writes: kept as a string "
                     "input", "the input is the arguments' text as it is", code="arguments-inexact")
        return arguments, {"rawArguments": True}
    # orjson reads an integer beyond 64 bits as a float (always written d.ddde+NN): its digits
    # would change, so the arguments stay the text they are.
    if b"+" in written and integers_beyond_64_bits(arguments):
        reading.warn(path, "tool call arguments hold an integer beyond 64 bits: kept as a string input",
                     "the input is the arguments' text as it is, since chatconv keeps integers exact within 64 bits",
                     code="arguments-inexact")
        return arguments, {"rawArguments": True}
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            inner = orjson.loads(value)
        except orjson.JSONDecodeError:
            return value, {}
        reading.warn(path, "tool call arguments are JSON encoded twice: decoded once more",
                     "write arguments as the JSON text of the input, not as a JSON string of that text",
                     code="arguments-double-encoded")
        return inner, {}
    # Arguments written otherwise than compactly (spaces after ':' say) are kept as written, so
    # that export gives them back to the byte; most logs write them compactly.
    return value, ({} if written == arguments.encode() else {"arguments": arguments})


def tool_arguments(part: dict, format_name: str) -> str:
    """The arguments string of a tool-call part: as tool_input read it when the input is still
    what was read from it, else the input as compact JSON."""
    own = kept(part, format_name)
    if own.get("rawArguments") and isinstance(part.get("input"), str):
        return part["input"]
    written = own.get("arguments")
    if isinstance(written, str):
        try:
            if orjson.loads(written) == part.get("input"):
                return written
        except orjson.JSONDecodeError:
            pass
    return exact_json(part.get("input", {})).decode()  # NotWritten when nested too deep to write


def free_of_marks(item: Any, marks: tuple[str, ...], consumed: tuple[str, ...], reading: Reading, path: tuple) -> bool:
    """Whether `item` has no field of its own (beside the `consumed` ones, read into the model
    message) named like one of `marks`, those a reader keeps beside the source's own fields in
    providerOptions: export could not tell them apart and one would be lost. False, with an
    error at that field, when it has one."""
    clash = [key for key in item if key in marks and key not in consumed] if isinstance(item, dict) else []
    if clash:
        reading.error(path + (clash[0],), f"a field named {clash[0]!r} cannot be kept: chatconv keeps a mark of "
                      "that name beside the source's own fields", "rename or remove the field", code="import-refused")
    return not clash


def string_value(value: Any) -> str:
    """`value`, which a reader needs as a string; TypeError (the reader's refusal names the place) if not."""
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def part_named(kind: Any) -> str:
    """A part (block, item) as a problem names it, whatever its `type` holds."""
    return f"a part of type {kind!r}" if isinstance(kind, str) else "a part with no type"


def name_results(imported: Imported, reading: Reading, names: dict[str, str]) -> None:
    """Give each tool result the name of the call it answers, by id (`names`: the calls of the
    conversation so far, gaining this one's); a result that answers no earlier call is an error,
    named by its source or not (its toolName would be invented, and validate refuses it)."""
    name_results_of(imported.messages, imported.paths, reading, names)


def name_results_of(messages: list[dict], paths: list[tuple], reading: Reading, names: dict[str, str]) -> bool:
    """name_results on a conversation's messages (each one's path in `paths`); False when a
    result answers no earlier call (the error is said at it)."""
    for index, message in enumerate(messages):
        if not isinstance(message.get("content"), list):
            continue
        for part in message["content"]:
            if part.get("type") == "tool-call":
                names[part["toolCallId"]] = part["toolName"]
            elif part.get("type") == "tool-result":
                name = names.get(part["toolCallId"])
                if name is None:  # validate refuses it, named or not: so is it here
                    where = paths[index] if index < len(paths) else ()
                    unknown = "" if part.get("toolName") else ", so its tool's name is unknown"
                    reading.error(where, f"tool result {part['toolCallId']!r} answers no earlier tool call of its "
                                  f"conversation{unknown}",
                                  "import the record that holds the call too (same conversation), or remove the result",
                                  code="tool-result-orphan")
                    return False
                if not part.get("toolName"):
                    part["toolName"] = name
    return True
