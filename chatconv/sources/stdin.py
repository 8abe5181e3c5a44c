"""Standard input: its format told from its first lines, then read on as JSONL batches or as
one document. validate, migrate and the recording commands all read it so.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import BinaryIO, Iterator

import orjson

from ..limits import LIMITS, read_at_most
from ..problems import UnreadableInput
from .batches import Batch, iter_line_batches, line_too_long, rest_of_line
from .compressed import refuse_compressed_input
from .text import UTF8_BOM, file_too_large, is_blank_line, refuse_foreign_encoding
from .yaml_parse import yaml_parse_problem


@dataclass
class StdinInput:
    """Standard input once its format is known: `head` holds the lines read to tell it."""

    format: str  # jsonl, json or yaml
    head: bytes
    stream: BinaryIO

    def batches(self) -> Iterator[Batch]:
        """Whole JSONL lines, the head first, numbered from the first line of the input."""
        if self.head:
            yield Batch(1, 0, self.head)
        yield from iter_line_batches(self.stream, first_line=self.head.count(b"\n") + 1, offset=len(self.head))

    def document(self) -> tuple[str, bytes]:
        """The format (see stdin_document_format) and bytes of the whole input, one document."""
        limit = LIMITS.max_file_bytes  # a pipe may not end: held whole, it is held up to the limit
        data = self.head + read_at_most(self.stream, limit - len(self.head))
        if len(data) > limit:
            raise UnreadableInput(file_too_large("-"))
        return stdin_document_format(data, self.format), data


def read_stdin(stream: BinaryIO | None = None) -> StdinInput:
    """Standard input (or `stream`), its format told; UnreadableInput when it is UTF-16 or -32."""
    stream = sys.stdin.buffer if stream is None else stream
    refuse_compressed_input(stream.peek(4)[:4] if hasattr(stream, "peek") else b"")
    fmt, head = read_stdin_head(stream)
    refuse_foreign_encoding(head[:4], "-")  # one problem, as for a file given by name
    return StdinInput(fmt, head, stream)


def read_stdin_head(stream: BinaryIO) -> tuple[str, bytes]:
    """The format of standard input (jsonl, json or yaml), and the lines read to tell it.

    JSONL when the first line that is not blank (a BOM aside) is a whole JSON object or array,
    or when it is a broken object and the next line is whole. A pretty-printed JSON document is
    neither: its first line opens a value it does not close (it ends with `{`, `[`, `,` or `:`).
    Else one JSON or YAML document, by the first character (see stdin_document_format).
    """
    held, content = bytearray(), []  # grown in place: bytes joined per line cost the square of many blank lines
    while len(content) < 2:
        line = rest_of_line(stream, 0, LIMITS.max_line_bytes)
        if line is None:  # /dev/zero, say: no line to hold
            raise UnreadableInput(line_too_long("-", held.count(b"\n") + 1))
        if not line:
            break
        held += line
        if not is_blank_line(line):
            text = line.removeprefix(UTF8_BOM)
            content.append(text)
            if _is_whole_json_line(text) or not _may_be_a_broken_record(text):
                break
    head = bytes(held)
    if _is_whole_json_line(content[0] if content else b"") or (
            len(content) == 2 and _is_whole_json_line(content[1])):
        return "jsonl", head
    first = content[0].lstrip()[:1] if content else b""
    return ("json" if first in (b"{", b"[") else "yaml"), head


def stdin_document_format(data: bytes, told: str) -> str:
    """json stays json when the document reads as JSON; else it is YAML, which reads flow style
    (`{evalcases: [...]}`) that looks like JSON but is not."""
    if told != "json":
        return told
    try:
        orjson.loads(data.removeprefix(UTF8_BOM))
        return "json"
    except orjson.JSONDecodeError:
        readable_as_yaml = yaml_parse_problem(data.decode("utf-8-sig", "replace"), "-") is None
        return "yaml" if readable_as_yaml else "json"  # else the JSON error is the one to show


def _is_whole_json_line(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), (dict, list))
    except orjson.JSONDecodeError:
        return False


def _may_be_a_broken_record(line: bytes) -> bool:
    """A line that starts an object and does not end as a pretty-printed document's first line."""
    text = line.strip()
    return text.startswith(b"{") and not text.endswith((b"{", b"[", b",", b":"))

