"""The `evalcases` era's cases: already the internal shape (`input_messages`, `expected_messages`,
`outcome`, `execution.evaluators`, `metadata`)."""

from __future__ import annotations

from typing import Iterator

from ..sources import Record
from . import Case, Lookup, Source, items


def read(record: Record, lookup: Lookup) -> Iterator[Case]:
    source = Source(record.file, record.locate)
    data = record.data if isinstance(record.data, dict) else {}
    for index, case in items(data.get("evalcases")):
        path = ("evalcases", index)
        if not isinstance(case.get("id"), str) or not isinstance(case.get("input_messages"), list):
            continue  # the schema says what is wrong
        messages = [m for _, m in items(case["input_messages"])]
        content_paths = [path + ("input_messages", i, "content") for i, _ in items(case["input_messages"])]
        evaluators = (case.get("execution") or {}).get("evaluators") if isinstance(case.get("execution"), dict) else None
        yield Case(case["id"], path, source, messages, content_paths,
                   expected=[m for _, m in items(case.get("expected_messages"))],
                   expected_paths=[path + ("expected_messages", i, "content")
                                   for i, _ in items(case.get("expected_messages"))],
                   criteria=case.get("outcome") if isinstance(case.get("outcome"), str) else None,
                   graders=list(evaluators) if isinstance(evaluators, list) else [],
                   metadata=case.get("metadata") if isinstance(case.get("metadata"), dict) else {})
