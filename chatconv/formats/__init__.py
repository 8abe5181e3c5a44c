"""Other tools' recordings: each format a folder of its own (openai_chat/, anthropic/, ...: its
detection, reading and writing) behind one small protocol, read by `chatconv import` into
chatconv's recordings and written by `chatconv export` from them. What they share stays here:
reading.py, importing.py, exporting.py, exchanges.py, streams.py, unread.py. A new format is one
new folder and one line in registry.py.

A format package has NAME, `detect(data)` (whether a parsed record is written in it) and
`read(reading)` (its conversations as AI SDK model messages: reading.py). A format that can be
exported also has TARGET (the chatconv.providers renderer whose rules its bodies keep) and
`write(messages, metadata, gather_tools=False)` (one request body). A format whose files are not
JSON or JSONL (inspect's `.eval` zip) has `claims(file)` and `records(file)`. Detection tries
the formats in IMPORTED's order, most particular first; `--from` forces one.
"""

from __future__ import annotations

from pathlib import Path

from ..problems import ChatconvError, Problem, UsageError
from ..providers import RENDERERS
from .exporting import ExportRun, export_bodies
from .import_files import import_chunks, import_paths, import_records
from .importing import ImportRun, iter_imported, split_steps
from .openai_chat import from_openai_messages
from .reading import Imported, Reading
from .registry import EXPORTED, FORMATS, IMPORTED, IMPORTED_NAMES, RecordingFormat, format_named


def read(path: str | Path, format: str | None = None, problems: list[Problem] | None = None) -> list[Imported]:
    """The conversations of a file in another tool's format (told from its content, or `format`).

    Problems (warnings, and the errors of what was left out) are appended to `problems`; without
    a list, an error raises ChatconvError."""
    run = ImportRun()
    conversations = list(iter_imported([str(path)], format, run))
    if problems is None and any(p.is_error for p in run.problems):
        raise ChatconvError([p for p in run.problems if p.is_error])
    if problems is not None:
        problems.extend(run.problems)
    return conversations


def write(messages: list[dict], format: str, metadata: dict | None = None, gather_tools: bool = False) -> dict:
    """One request body (or dataset row) of `format` (openai-chat, anthropic, gemini, sharegpt)
    holding `messages` (AI SDK model messages); ProviderRuleError when that API would refuse them."""
    fmt = format_named(format)
    if fmt.NAME not in EXPORTED:
        raise UsageError(f"{format} cannot be written; chatconv writes {', '.join(EXPORTED)}")
    if fmt.TARGET is not None:  # an API's body keeps its rules; a dataset's row has none
        RENDERERS[fmt.TARGET](messages)
    return fmt.write(messages, metadata or {}, gather_tools=gather_tools)


__all__ = ["EXPORTED", "FORMATS", "IMPORTED", "IMPORTED_NAMES", "ExportRun", "ImportRun", "Imported", "Reading",
           "RecordingFormat", "export_bodies", "format_named", "from_openai_messages", "import_paths",
           "import_chunks", "import_records", "read", "split_steps", "write"]
