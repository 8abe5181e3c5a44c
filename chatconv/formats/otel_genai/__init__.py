"""OpenTelemetry GenAI recordings: the semantic conventions' gen_ai.input.messages,
gen_ai.output.messages and gen_ai.system_instructions, read (import only) from

- OTLP JSON traces ({"resourceSpans": [...]}): each span that has input or output messages is a
  conversation (system instructions, then input, then output messages), its id the span's
  gen_ai.conversation.id, else "<traceId>:<spanId>"; the span's other attributes (decoded from
  OTLP's typed values), its own fields, its scope and its resource go to the conversation's
  metadata;
- spans as the OpenTelemetry SDK writes them (Span.to_json, a ConsoleSpanExporter or a file
  exporter: `context`, `attributes` a plain object), one per record, in an array, or under
  `{"spans": [...]}`: read the same way, ids "<trace_id>:<span_id>";
- an object holding those keys (their values arrays, or the JSON text of arrays), its other
  keys the metadata;
- a bare array of OTel messages (a JSON file, or a JSONL line).

Output messages are the model's choices (candidates): more than one makes one conversation
per choice, each with the input (ids suffixed #1, #2, ...). Messages and parts: otel_messages.
"""

from __future__ import annotations

from typing import Any, Iterator

import orjson

from .flattened import has_flattened, message_values
from .messages import KNOWN_TYPES, NAME, messages_of, system_instructions
from .otlp import INPUT, MESSAGE_KEYS, OUTPUT, SYSTEM, any_value, attributes_of
from ...sources import integers_beyond_64_bits
from ..reading import Imported, Reading, rest_of

CONVERSATION_ID = "gen_ai.conversation.id"

__all__ = ["NAME", "any_value", "detect", "read"]


# (the flattened conventions' keys have indices in them: those of a first message's role say them)
KEYS = frozenset({"resourceSpans", "spans", "attributes", *MESSAGE_KEYS, "gen_ai.prompt", "gen_ai.completion",
                  "gen_ai.prompt.0.role", "gen_ai.prompt.0.content", "gen_ai.completion.0.role",
                  "gen_ai.completion.0.content", "llm.input_messages.0.message.role",
                  "llm.output_messages.0.message.role", "openinference.span.kind"})


def detect(data: Any) -> bool:
    """An OTLP JSON trace, spans as the OpenTelemetry SDK writes them (one, or `{"spans": [...]}`),
    an object with gen_ai message keys, or a list of OTel messages (parts with OTel's types: text
    written as `content`, never a plain OpenAI or Gemini list)."""
    if isinstance(data, dict):
        return (isinstance(data.get("resourceSpans"), list) or any(key in data for key in MESSAGE_KEYS)
                or has_flattened(data) or _is_sdk_span(data) or _is_sdk_spans(data.get("spans")))
    return _is_message_list(data)


def _is_sdk_span(data: Any) -> bool:
    """A span as the SDK's Span.to_json writes it: its attributes a plain object, holding messages
    (or, a span of a file of spans, its `context` naming it: a tool or HTTP span is skipped, told)."""
    attributes = data.get("attributes") if isinstance(data, dict) else None
    context = data.get("context") if isinstance(data, dict) else None
    return isinstance(attributes, dict) and (any(key in attributes for key in MESSAGE_KEYS) or has_flattened(attributes)
                                             or (isinstance(context, dict) and "span_id" in context and "trace_id" in context))


def _is_sdk_spans(spans: Any) -> bool:
    return isinstance(spans, list) and any(map(_is_sdk_span, spans)) and all(
        isinstance(span, dict) and isinstance(span.get("attributes", {}), dict) for span in spans)



def _is_message_list(data: Any) -> bool:
    if not isinstance(data, list) or not data:
        return False
    # Lenient about the shape (a malformed message is then refused at its path, not read as
    # another format), strict about the marks: some part of OTel's own type with its own field,
    # and no text written as `text` (Gemini's parts, AI SDK UI messages).
    marked = False
    for message in data:
        if not (isinstance(message, dict) and "role" in message and "parts" in message and "content" not in message):
            return False
        for part in message["parts"] if isinstance(message["parts"], list) else []:
            if isinstance(part, dict) and "text" in part and "content" not in part:
                return False
            if isinstance(part, dict) and isinstance(part.get("type"), str):
                marked = marked or (part["type"] in KNOWN_TYPES and _own_field(part) in part)
    return marked


def _own_field(part: dict) -> str:
    return {"text": "content", "reasoning": "content", "tool_call": "name", "tool_call_response": "id",
            "blob": "content", "uri": "uri", "file": "file_id"}.get(part["type"], "id")


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    if isinstance(data, list):
        found = messages_of(data, reading, ())
        if found is not None:
            yield Imported(None, *found[:1], {}, found[1])
        return
    if "resourceSpans" in data:
        yield from _trace(data, reading)
        return
    if _is_sdk_span(data):
        yield from _sdk_spans([((), data)], {}, reading)
        return
    if _is_sdk_spans(data.get("spans")):
        spans = [(("spans", index), span) for index, span in enumerate(data["spans"])]
        yield from _sdk_spans(spans, rest_of(data, ("spans",)), reading)
        return
    values, own = span_values(data, ())
    if not values:  # named with --from, but none of the format's marks
        reading.error((), "not an OTel GenAI record: no resourceSpans, gen_ai.input.messages, "
                      "gen_ai.output.messages or gen_ai.system_instructions",
                      "OTel GenAI records are OTLP JSON traces, objects with those keys, or arrays of messages",
                      code="unknown-format")
        return
    conversation_id = data.get(CONVERSATION_ID)
    yield from _conversations(values, conversation_id if isinstance(conversation_id, str) else None, own, reading)


def span_values(attributes: dict, where: tuple) -> tuple[dict[str, tuple[Any, tuple]], dict]:
    """A span's messages by gen_ai key (each with its path) and its other attributes: the
    conventions' message JSON, or messages written as flattened attributes (flattened.py)."""
    values = {key: (attributes[key], where + (key,)) for key in MESSAGE_KEYS if key in attributes}
    own = rest_of(attributes, MESSAGE_KEYS)
    if has_flattened(attributes):
        flat, consumed = message_values(attributes, values)
        values.update({key: (value, where + (name,)) for key, (value, name) in flat.items()})
        own = {key: value for key, value in own.items() if key not in consumed}
    return values, own


def _conversations(values: dict[str, tuple[Any, tuple]], conversation_id: str | None, metadata: dict,
                   reading: Reading) -> Iterator[Imported]:
    """The conversations of one call: (system, input) then each output message (a choice)."""
    read: dict[str, tuple[list[dict], list[tuple]]] = {}
    for key, (value, path) in values.items():
        if isinstance(value, str):
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError as exc:
                reading.error(path, f"{key} is not JSON text ({exc})",
                              f"{key} holds the JSON text of an array, as the OTel GenAI conventions write it",
                              code="invalid-json")
                yield _left_out(conversation_id)
                return
        if key == SYSTEM:
            message = system_instructions(value, reading, path)
            found = None if message is None else ([message], [path])
        else:
            found = messages_of(value, reading, path)
        if found is None:
            yield _left_out(conversation_id)
            return
        read[key] = found
    messages, paths = [], []
    for key in (SYSTEM, INPUT):
        messages += read.get(key, ([], []))[0]
        paths += read.get(key, ([], []))[1]
    choices, choice_paths = read.get(OUTPUT, ([], []))
    if len(choices) <= 1:
        yield Imported(conversation_id, messages + choices, metadata, paths + choice_paths)
        return
    for index, (choice, path) in enumerate(zip(choices, choice_paths)):
        named = conversation_id if conversation_id is None or not index else f"{conversation_id}#{index}"
        yield Imported(named, [*messages, choice], metadata, [*paths, path])


def _left_out(conversation_id: str | None) -> Imported:
    """A conversation whose reading failed: the importer leaves it out and files its problems,
    so that the next span's conversation is read on its own."""
    return Imported(conversation_id, [], {}, [])


def _trace(data: dict, reading: Reading) -> Iterator[Imported]:
    """Each span of an OTLP JSON trace that has gen_ai input or output messages."""
    spans = list(_spans(data, reading))
    if reading.failed:  # the trace's own structure is wrong: no span can be told apart
        return
    found, skipped, used = 0, 0, set()
    for where, span, metadata in spans:
        attributes = attributes_of(span.get("attributes", []), reading, where + ("attributes",))
        if attributes is None:
            found += 1
            yield _left_out(f"{span.get('traceId')}:{span.get('spanId')}")
            continue
        plain = {key: value for key, (value, _) in attributes.items()}
        values, own = span_values(plain, where + ("attributes",))
        if INPUT not in values and OUTPUT not in values:
            skipped += 1
            continue
        values = {key: attributes[key] if key in attributes else value for key, value in values.items()}
        conversation_id = _span_conversation(own, span.get("traceId"), span.get("spanId"), used)
        found += 1
        span_metadata = {**metadata, "span": rest_of(span, ("attributes",)), "attributes": own}
        if found == 1 and rest_of(data, ("resourceSpans",)):
            span_metadata["export"] = rest_of(data, ("resourceSpans",))
        yield from _conversations(values, conversation_id, span_metadata, reading)
    if skipped:
        reading.warn(("resourceSpans",), f"{skipped} span(s) without {INPUT} or {OUTPUT}: not imported",
                     "only model-call spans hold messages; the others (tools, HTTP, agents) have none",
                     code="import-skipped")
    if not found:
        reading.warn(("resourceSpans",), "no span of this trace holds gen_ai messages", code="import-empty")


def _span_conversation(attributes: dict, trace_id: Any, span_id: Any, used: set) -> str:
    """A span's conversation id: its gen_ai.conversation.id, else "<trace id>:<span id>"; a second
    span of an id already used gets "#<span id>" after it (each model-call span repeats the
    history it was sent, so each is a conversation of its own)."""
    conversation_id = attributes.get(CONVERSATION_ID)
    if not isinstance(conversation_id, str) or not conversation_id:
        conversation_id = f"{trace_id}:{span_id}"
    if conversation_id in used:
        conversation_id = f"{conversation_id}#{span_id}"
    used.add(conversation_id)
    return conversation_id


def _sdk_spans(spans: list[tuple[tuple, dict]], export: dict, reading: Reading) -> Iterator[Imported]:
    """Each span written by the OpenTelemetry SDK (Span.to_json: `context`, `attributes` as a
    plain object) that has gen_ai input or output messages; its other attributes, its own fields
    and (once) the file's other keys are the conversation's metadata, as for OTLP."""
    skipped, used = 0, set()
    for where, span in spans:
        values, own = span_values(span.get("attributes") or {}, where + ("attributes",))
        if INPUT not in values and OUTPUT not in values:
            skipped += 1
            continue
        fields = _ids_as_text(rest_of(span, ("attributes",)), reading, where)
        context = fields.get("context") if isinstance(fields.get("context"), dict) else {}
        conversation_id = _span_conversation(own, context.get("trace_id"), context.get("span_id"), used)
        metadata = {"span": fields, "attributes": own}
        if export:
            metadata["export"], export = export, {}
        yield from _conversations(values, conversation_id, metadata, reading)
    if skipped:
        reading.warn(("spans",) if len(spans) > 1 or spans[0][0] else (), f"{skipped} span(s) without {INPUT} or "
                     f"{OUTPUT}: not imported", "only model-call spans hold messages; the others (tools, HTTP, "
                     "agents) have none", code="import-skipped")


def _ids_as_text(span: dict, reading: Reading, where: tuple) -> dict:
    """The span's own fields, its trace and span ids written as integers beyond 64 bits (as some
    exporters dump them: any-agent) kept as their digits, with a warning: chatconv writes
    integers exactly within 64 bits, and these are names, not numbers."""
    big = [value for value in _floats(span) if abs(value) >= 2 ** 63]
    if not big:
        return span
    digits = {float(text): text for text in integers_beyond_64_bits(reading.record.text or b"")}

    def as_text(value: Any) -> Any:
        if isinstance(value, float) and value in digits:
            return digits[value]
        if isinstance(value, dict):
            return {key: as_text(item) for key, item in value.items()}
        return [as_text(item) for item in value] if isinstance(value, list) else value

    reading.warn(where, "the span's ids are integers beyond 64 bits: kept as their digits (text)",
                 "OTel writes trace and span ids as hex text; chatconv keeps integers exactly within 64 bits",
                 code="import-changed")
    return as_text(span)


def _floats(value: Any) -> Iterator[float]:
    if isinstance(value, float):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _floats(item)
    elif isinstance(value, list):
        for item in value:
            yield from _floats(item)


def _spans(data: dict, reading: Reading) -> Iterator[tuple[tuple, dict, dict]]:
    """(path, span, its resource's and scope's fields) of each span, in order."""
    for r, resource_spans in enumerate(_list(data, "resourceSpans", (), reading)):
        resource = rest_of(resource_spans, ("scopeSpans",)) if isinstance(resource_spans, dict) else {}
        for s, scope_spans in enumerate(_list(resource_spans, "scopeSpans", ("resourceSpans", r), reading)):
            where = ("resourceSpans", r, "scopeSpans", s)
            scope = rest_of(scope_spans, ("spans",)) if isinstance(scope_spans, dict) else {}
            for k, span in enumerate(_list(scope_spans, "spans", where, reading)):
                if not isinstance(span, dict):
                    reading.error(where + ("spans", k), "a span must be an object", code="wrong-type")
                    return
                yield where + ("spans", k), span, {"resourceSpans": resource, "scopeSpans": scope}


def _list(container: Any, key: str, path: tuple, reading: Reading) -> list:
    if not isinstance(container, dict):
        reading.error(path, f"an OTLP {path[-2] if len(path) > 1 else 'trace'} entry must be an object",
                      code="wrong-type")
        return []
    value = container.get(key, [])
    if not isinstance(value, list):
        reading.error(path + (key,), f"OTLP {key} must be an array", code="wrong-type")
        return []
    return value
