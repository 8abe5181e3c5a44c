"""The `testcases` era's cases: one `messages` list; a trailing assistant message (after at least
one other) is the expected answer, the rest the input."""

from __future__ import annotations

from typing import Iterator

from ..sources import Record
from . import Case, Lookup, Source, items


def read(record: Record, lookup: Lookup) -> Iterator[Case]:
    source = Source(record.file, record.locate)
    data = record.data if isinstance(record.data, dict) else {}
    for index, case in items(data.get("testcases")):
        path = ("testcases", index)
        messages = case.get("messages")
        if not isinstance(case.get("id"), str) or not isinstance(messages, list):
            continue  # the schema says what is wrong
        numbered = list(items(messages))
        expected = []
        if len(numbered) > 1 and numbered[-1][1].get("role") == "assistant":
            expected = [numbered.pop()]
        yield Case(case["id"], path, source, [m for _, m in numbered],
                   [path + ("messages", i, "content") for i, _ in numbered], expected=[m for _, m in expected],
                   expected_paths=[path + ("messages", i, "content") for i, _ in expected],
                   criteria=case.get("outcome") if isinstance(case.get("outcome"), str) else None,
                   metadata=case.get("metadata") if isinstance(case.get("metadata"), dict) else {})
