"""The YAML rewrite by spans: a migrated document written by copying the text of every part the
migration left as it was (with its comments, quoting and layout) and writing anew, in block
style, only the collections it made or changed. A copy moves with its value: a renamed key
keeps its value's text and comments, a value moved deeper is indented with it.

It reads each value's text once, in C (sources/yaml_nodes.py), where ruamel.yaml's round trip
re-reads and re-writes every token in Python, some 14 s a MB. What it cannot write with
certainty raises Unsupported, and yaml_rewrite.py takes the round trip instead.
"""

from __future__ import annotations

import re
from typing import Any

from ..sources.yaml_nodes import Written, WrittenDocument, fingerprint
from .yaml_scalars import Unsupported, fresh_scalar


_LINE_COMMENT = re.compile(r"[ \t]+#[^\n]*")


def rewrite_by_spans(text: str, read: WrittenDocument, document: dict, indents: tuple[int, int, int]) -> str:
    """The text of `document` (the migrated data whose values were read from `text`, as `read`
    says) in `text`'s layout; `indents` (mapping, sequence, offset) for collections made anew."""
    root = read.at(document)
    if root is None or root.flow or root.column != 0:
        raise Unsupported("the document is not a block mapping at its first column")
    start = _line_start(text, root.start)
    end = _region_end(text, root.end)
    out = [text[:start]]
    _Writer(text, read, indents).block(document, 0, out)
    out.append(text[end:])
    return "".join(out)


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _region_end(text: str, end: int) -> int:
    """Where a node's lines end: a block collection's node ends where the next token starts,
    on a later line; its region stops at that line's start."""
    return end if end >= len(text) or text[end - 1] == "\n" else _line_start(text, end)


def _lines(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _shifted(text: str, delta: int) -> str:
    """`text`, every line after its first moved `delta` columns (left when negative, as far as
    the line has spaces): a block moved with its key keeps its own inner layout."""
    if delta > 0:
        return re.sub(r"\n(?=[^\n])", "\n" + " " * delta, text)
    if delta < 0:
        return re.sub(r"\n {1,%d}" % -delta, "\n", text)
    return text


class _Writer:
    def __init__(self, text: str, read: WrittenDocument, indents: tuple[int, int, int]):
        self.text = text
        self.read = read
        self.mapping_indent, self.sequence_indent, self.offset = indents
        self._unchanged: dict[int, Written | None] = {}  # the document does not change while written
        self._comments_written: set[int] = set()  # where each block of trailing comments written began

    def origin(self, value: Any) -> Written | None:
        return self.read.at(value)

    def unchanged(self, value: Any) -> Written | None:
        """Where `value` was written, if it is as it was read."""
        if id(value) not in self._unchanged:
            written = self.origin(value)
            if written is not None and isinstance(value, (dict, list)) and fingerprint(written) != written.fingerprint:
                written = None
            self._unchanged[id(value)] = written
        return self._unchanged[id(value)]

    @staticmethod
    def same(value: Any, was: Any, written: Written | None) -> bool:
        """Whether `value` is what the part `was` held (unchanged): then its text can stay."""
        if isinstance(value, (dict, list)):
            return value is was and written is not None
        return type(value) is type(was) and value == was

    def flow(self, value: Any) -> str:
        """A value on one line in flow style (`{a: 1, b: [x, y]}`): a changed flow collection
        stays in the style it was written in."""
        if isinstance(value, dict):
            return "{" + ", ".join(f"{self.flow(key)}: {self.flow(item)}" for key, item in value.items()) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(self.flow(item) for item in value) + "]"
        written = self.origin(value)
        if written is not None:
            text = self.text[written.start:written.end]
            if "\n" in text or written.style in ("|", ">"):
                raise Unsupported("a scalar over several lines in a flow collection")
            return text
        return fresh_scalar(value, flow=True)

    def block(self, value: dict | list, column: int, out: list[str], lead: str | None = None) -> None:
        """A non-empty collection's lines, in block style, its keys or dashes at `column`; `lead`
        in place of the first line's indentation (after a `- `, say)."""
        lead = " " * column if lead is None else lead
        (self.mapping if isinstance(value, dict) else self.sequence)(value, column, out, lead)

    def mapping(self, mapping: dict, column: int, out: list[str], lead: str) -> None:
        written = self.origin(mapping)
        parts = {} if written is None or written.flow else {part[0]: (i, part) for i, part in enumerate(written.parts)}
        gone = None
        for key, value in mapping.items():
            if not isinstance(key, str):
                raise Unsupported("a key that is not text")
            out.append(lead)
            lead = " " * column
            was = self.unchanged(value) if isinstance(value, (dict, list)) else None
            index, part = parts.get(key, (None, None))
            if part is not None and self.same(value, part[4], was):  # the entry as it was: its text, comments and all
                out.append(self.region(written, index, column))
                continue
            key_text = self.text[part[1]:part[2]] if part is not None else fresh_scalar(key)
            if part is None and parts:  # a new key: one renamed, whose value moves with it?
                if gone is None:
                    gone = [(i, p) for k, (i, p) in parts.items() if k not in mapping]
                index, part = next(((i, p) for i, p in gone if p[4] is value or self.same(value, p[4], was)),
                                   (None, None))
                if part is not None and self.same(value, part[4], was):  # the value's text (and comments) stay
                    out.append(key_text + self.region(written, index, column)[part[2] - part[1]:])
                    continue
            out.append(key_text)
            self.after_key(value, column, part, out)
            if part is not None:
                out.append(self.trailing_comments(*self.region_span(written, index)))

    def region(self, written: Written, index: int, column: int) -> str:
        """The text of part `index` of a block collection (for a sequence, from its dash), up to the
        next part, trailing comments included; its lines moved to stand at `column`."""
        start, end = self.region_span(written, index)
        return self.copy(start, end, column - (start - _line_start(self.text, start)))

    def copy(self, start: int, end: int, delta: int) -> str:
        """The text from `start` to `end`, its lines after the first moved `delta` columns; the
        comment lines it ends with are then written (trailing_comments writes them no more)."""
        self.trailing_comments(start, end)
        return _lines(_shifted(self.text[start:end], delta))

    def region_span(self, written: Written, index: int) -> tuple[int, int]:
        start = self.part_start(written, index)
        end = (_line_start(self.text, self.part_start(written, index + 1)) if index + 1 < len(written)
               else _region_end(self.text, written.end))
        return start, end

    def trailing_comments(self, start: int, end: int) -> str:
        """The comment lines that end the text from `start` to `end` (a part's, above the next
        part), for a part written anew: they stay where they stood, as they were. A block
        collection and its last part end on the same lines: those are written once."""
        text, at = self.text, end
        while True:  # back over whole lines that are blank or comments; never the part's first
            newline = text.rfind("\n", start, at - 1)
            if newline < 0:
                break
            line = text[newline + 1:at].strip()
            if line and not line.startswith("#"):
                break
            at = newline + 1
        if "#" not in text[at:end] or at in self._comments_written:
            return ""
        self._comments_written.add(at)
        return text[at:end]

    def part_start(self, written: Written, index: int) -> int:
        part = written.part(index)
        if isinstance(written.value, dict):
            return part[1]
        dash = self.text.rfind("-", 0, part[3])
        if dash < 0 or self.text[dash + 1:part[3]].strip(" \n"):
            raise Unsupported("a sequence item with a comment or property before it")
        return dash

    def after_key(self, value: Any, column: int, part: tuple | None, out: list[str]) -> None:
        """What follows a key: the value, on the key's line or in lines below it."""
        if isinstance(value, (dict, list)) and value and not self._flow(value):
            prologue = ":\n"
            if part is not None and self.text[part[2]:part[3]].count("\n"):  # the value was below its key
                below = _line_start(self.text, part[3])
                prologue = _shifted(self.text[part[2]:below], column - (part[1] - _line_start(self.text, part[1])))
            out.append(prologue)
            self.moved_or_made(value, column + (self.mapping_indent if isinstance(value, dict) else self.offset), out)
            return
        out.append(": ")
        self.inline(value, column + self.mapping_indent, out)

    def moved_or_made(self, value: dict | list, column: int, out: list[str], lead: str | None = None) -> None:
        """A block collection at `column`: its text if it is as read, else written anew."""
        written = self.unchanged(value)
        if written is None:
            self.block(value, column, out, lead)
            return
        start = written.start if isinstance(value, dict) else self.part_start(written, 0)
        out.append(" " * column if lead is None else lead)
        out.append(self.copy(start, _region_end(self.text, written.end), column - written.column))

    def _flow(self, value: dict | list) -> bool:
        """Whether a collection was written in flow style (it stays so)."""
        written = self.origin(value)
        return written is not None and written.flow

    def sequence(self, items: list, column: int, out: list[str], lead: str) -> None:
        written = self.origin(items)
        places = {} if written is None or written.flow else {id(part[4]): i for i, part in enumerate(written.parts)}
        for item in items:
            out.append(lead)
            lead = " " * column
            index = places.get(id(item))
            # A scalar is its text; a collection must be as read.
            if (index is not None and written.part(index)[4] is item
                    and (not isinstance(item, (dict, list)) or self.unchanged(item) is not None)):
                out.append(self.region(written, index, column))
                continue
            out.append("- ")
            self.inline(item, column + self.sequence_indent - self.offset, out)
            if index is not None:
                out.append(self.trailing_comments(*self.region_span(written, index)))

    def inline(self, value: Any, column: int, out: list[str]) -> None:
        """A value that starts on the current line (after `key: ` or `- `), its lines below
        standing at `column`."""
        if isinstance(value, (dict, list)):
            written = self.unchanged(value)
            origin = self.origin(value) if written is None else written
            if not value and written is None:
                out.append(("{}" if isinstance(value, dict) else "[]") + "\n")
            elif written is None and origin is not None and origin.flow:
                out.append(self.flow(value) + "\n")
            elif written is None or not written.flow:
                self.moved_or_made(value, column, out, "")
            elif "\n" not in self.text[written.start:written.end]:
                out.append(self.text[written.start:written.end] + "\n")
            else:
                raise Unsupported("a flow collection over several lines, moved")
            return
        written = self.origin(value)
        if written is None:
            out.append(fresh_scalar(value) + "\n")
        else:
            out.append(self.scalar(written, column))

    def scalar(self, written: Written, column: int) -> str:
        """A scalar's text as written, with the comment that ended its line; its lines after the
        first at `column` (a block scalar's content keeps its inner indentation)."""
        text = self.text[written.start:written.end]
        if written.style in ("|", ">") and re.match(r"[|>][+-]?[1-9]", text):
            raise Unsupported("a block scalar with an indentation indicator")
        if "\n" in text.rstrip("\n"):
            lines = [line for line in text.split("\n")[1:] if line.strip(" ")]
            least = min((len(line) - len(line.lstrip(" ")) for line in lines), default=column)
            text = _shifted(text, column - least)
        if not text.endswith("\n"):
            after = _LINE_COMMENT.match(self.text, written.end)
            text += (after.group() if after else "") + "\n"
        return text
