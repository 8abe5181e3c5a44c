"""A request logged with its response: `{"request": body, "response": object, ...}`, as API
loggers and proxies keep them. Each half is read by the format that reads both (OpenAI chat,
Responses, Gemini; Anthropic's reader reads its own exchanges), and they make one conversation:
the request's messages, then the response's answer as the output of the request's last turn.
A Gemini response of several candidates makes one conversation per candidate, each after the
same request. The record's other keys (latency, timestamps) are kept on the answer's first
message under providerOptions[format].record, as Anthropic's exchanges keep them, and the
response's own fields that its format files as a conversation's metadata (a Responses
response's id, model, usage) under providerOptions[format].response.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Iterator

from ..sources import Record
from ..sources.record import unalias
from .reading import Imported, Reading, rest_of

HALVES = ("request", "response")


@dataclass(frozen=True)
class Exchange:
    """A format's reading of its {request, response} records, as a format of its own to importing."""

    format: Any

    @property
    def NAME(self) -> str:
        return self.format.NAME

    def read(self, reading: Reading) -> Iterator[Imported]:
        return read_exchange(self.format, reading)


def exchange_format(data: Any, readers) -> Exchange | None:
    """The reading of `data` as an exchange by the first of `readers` that reads both its halves
    (the request as a request, the response as a response); else by the one that reads the half
    there is, when the other is none any format reads (missing, null, an API error, a list of
    chunks); None when neither half is read, or when they are two formats'."""
    if not isinstance(data, dict) or ("request" not in data and "response" not in data):
        return None
    asks = [fmt for fmt in readers if _is_half(fmt, data.get("request"), "request")]
    answers = [fmt for fmt in readers if _is_half(fmt, data.get("response"), "response")]
    both = next((fmt for fmt in asks if fmt in answers), None)
    if both is not None:
        return Exchange(both)
    if asks and not answers and not any(fmt.detect(data.get("response")) for fmt in readers):
        return Exchange(asks[0])
    if answers and not asks and not any(fmt.detect(data.get("request")) for fmt in readers):
        return Exchange(answers[0])
    return None


def _is_half(fmt, data: Any, half: str) -> bool:
    responds = getattr(fmt, "is_response", None)
    return (isinstance(data, dict) and responds is not None and fmt.detect(data)
            and responds(data) == (half == "response"))


def _shown(value: Any) -> str:
    """What a half that is not read is, as a problem says it."""
    if value is None:
        return "null"
    if isinstance(value, dict) and "error" in value:
        return "an API error"
    return {list: "a list", str: "a string", dict: "an object"}.get(type(value), type(value).__name__)


def read_exchange(fmt, reading: Reading) -> Iterator[Imported]:
    halves = []
    for key in HALVES:
        if not _is_half(fmt, reading.data.get(key), key):
            halves.append(None)
            continue
        half = Reading(half_record(reading.record, key), reading.format)
        halves.append([_moved_under(key, imported) for imported in fmt.read(half)])
        reading.problems.extend(half.problems)
    requests, answers = halves
    if requests is None:  # the response alone: the request is null, an error, missing
        if "request" in reading.data:
            reading.warn(("request",), f"the request is {_shown(reading.data['request'])}, no request body chatconv "
                         "reads: the response is read alone")
        for answer in answers:
            if answer.messages:
                reading.keep(answer.messages[0], {"record": rest_of(reading.data, ("response",)) or None})
            yield answer
        return
    if not requests:
        return  # the request's problems are said
    request = requests[0]
    if not answers:  # no answer: a blocked prompt, no choices, a failed call, an API error, no response
        response = reading.data.get("response")
        if response is not None and request.messages:
            reading.keep(request.messages[-1], {"response": response})
        if "response" in reading.data:
            what = "holds no answer (no choice, candidate or output)" if answers is not None else \
                f"is {_shown(response)}, no response chatconv reads"
            reading.warn(("response",), f"the response {what}: the request is imported"
                         + (f", the response kept whole on its last message (providerOptions.{reading.format}.response)"
                            if response is not None and request.messages else ""), code="import-changed")
        yield request
        return
    rest = rest_of(reading.data, HALVES)
    asked_system = [message["content"] for message in request.messages if message.get("role") == "system"]
    for number, answer in enumerate(answers):
        asked = request if number == 0 else copy.deepcopy(request)  # each candidate's conversation its own
        messages, paths = answer.messages, answer.paths
        # A Responses response repeats the instructions the request was answered with: said once,
        # in the request, and first in the conversation when the request's body did not hold them.
        before, before_paths = [], []
        while messages and messages[0].get("role") == "system":
            if messages[0].get("content") not in asked_system:
                before.append(messages[0])
                before_paths.append(paths[0])
            messages, paths = messages[1:], paths[1:]
        if messages:
            reading.keep(messages[0], {"response": answer.metadata or None, "record": rest or None})
        yield Imported(answer.id if answer.id is not None else asked.id, before + asked.messages + messages,
                       asked.metadata, before_paths + asked.paths + paths)


def half_record(record: Record, key: str) -> Record:
    """The request or response of an exchange record as a record of its own: its problems are
    located in the record's text and named by their path in it ($.response.choices[0])."""
    aliases = {(): unalias((key,), record.aliases or {})}
    as_read = record.as_read if record.as_read is not None else record.data
    return replace(record, data=record.data[key], problems=[], prefix=record.prefix + (key,), aliases=aliases,
                   as_read=as_read, moved=())


def _moved_under(key: str, imported: Imported) -> Imported:
    imported.paths = [(key,) + path for path in imported.paths]
    return imported
