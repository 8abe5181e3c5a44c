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
    (the request as a request, the response as a response), or None."""
    if not (isinstance(data, dict) and isinstance(data.get("request"), dict) and isinstance(data.get("response"), dict)):
        return None
    request, response = data["request"], data["response"]
    for fmt in readers:
        if _is_half(fmt, request, "request") and _is_half(fmt, response, "response"):
            return Exchange(fmt)
    return None


def _is_half(fmt, data: dict, half: str) -> bool:
    responds = getattr(fmt, "is_response", None)
    return responds is not None and fmt.detect(data) and responds(data) == (half == "response")


def read_exchange(fmt, reading: Reading) -> Iterator[Imported]:
    halves = []
    for key in HALVES:
        half = Reading(half_record(reading.record, key), reading.format)
        halves.append([_moved_under(key, imported) for imported in fmt.read(half)])
        reading.problems.extend(half.problems)
    requests, answers = halves
    if not requests:
        return  # the request's problems are said
    request = requests[0]
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
