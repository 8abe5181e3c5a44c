"""A YAML document read as load_yaml reads it, keeping where each of its values was written
(the text span of every collection, and of every scalar that is an object of its own) and its
comments. migrate/yaml_spans.py rewrites a migrated document from them, copying the text of
what the migration left as it was.

The document is built from the C parser's events as they come, so that no node graph is held:
composing a 5 MB eval file takes some 130 MiB of nodes and marks, the data itself 30 MiB.
Only plain data is read so: a document with anchors, aliases, merge keys, tags, keys that are
not scalars, a repeated key or nesting past MAX_YAML_DEPTH gives None, and is left to load_yaml
and the round trip, which say what is wrong with it or keep what it shares.
"""

from __future__ import annotations

import hashlib
import pickle
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from .yaml import STR_TAG, TEXT_TAGS
from .yaml_parse import MAX_YAML_DEPTH, safe_loader



class Written:
    """Where a value of the document was written, as WrittenDocument holds it: its node's span
    (character offsets) and column; a scalar's style (None or "": plain, or one of | > ' ");
    whether a collection is in flow style, its fingerprint as read (to tell later whether a
    migration changed it), and its parts as read: (key or index, key start, key end, value
    start, value) each."""

    __slots__ = ("document", "number", "value")

    def __init__(self, document: "WrittenDocument", number: int):
        self.document, self.number = document, number
        self.value = document.values[number]

    def _meta(self, field: int) -> int:
        return self.document.meta[_FIELDS * self.number + field]

    start = property(lambda self: self._meta(0))
    end = property(lambda self: self._meta(1))
    column = property(lambda self: self._meta(2))
    fingerprint = property(lambda self: self._meta(3))
    style = property(lambda self: self.document.styles[self.number])
    flow = property(lambda self: self.document.styles[self.number] is True)

    def __len__(self) -> int:
        return self._meta(5)

    def part(self, index: int) -> tuple:
        """(key or index, key start, key end, value start, value) of a collection's part."""
        document, at = self.document, self._meta(4) + index
        offsets = document.part_offsets
        key = document.part_keys[at] if isinstance(self.value, dict) else index
        return key, offsets[3 * at], offsets[3 * at + 1], offsets[3 * at + 2], document.part_values[at]

    @property
    def parts(self) -> list[tuple]:
        return [self.part(index) for index in range(len(self))]


_FIELDS = 6  # per value in WrittenDocument.meta: start, end, column, fingerprint, first part, parts


@dataclass
class WrittenDocument:
    """Where the values of a document were written, held compact (a 5 MB file has half a
    million values and parts): the collections, and the scalars other than text written plain
    on one line (such a text is its value, and is written again as it is when it may be), each
    by a number (`index` maps id(value) to it; `values` holds them, so that their ids stay
    theirs), with _FIELDS numbers in `meta` and its style in `styles` (True: a flow collection);
    the parts of each collection, one after the other; and the document's comments, counted."""

    index: dict[int, int] = field(default_factory=dict)
    values: list = field(default_factory=list)
    meta: array = field(default_factory=lambda: array("q"))
    styles: list = field(default_factory=list)
    part_keys: list = field(default_factory=list)
    part_values: list = field(default_factory=list)
    part_offsets: array = field(default_factory=lambda: array("q"))
    comments: Counter = field(default_factory=Counter)

    def at(self, value: Any) -> Written | None:
        """Where `value` was written, if it was read from the document (and is not plain text)."""
        number = self.index.get(id(value))
        return Written(self, number) if number is not None and self.values[number] is value else None

    def add(self, value: Any, start: int, end: int, column: int, style: Any) -> int:
        number = self.index[id(value)] = len(self.values)
        self.values.append(value)
        self.meta.extend((start, end, column, 0, 0, 0))
        self.styles.append(style)
        return number

    def close(self, number: int, end: int, keys: list | None, values: list, offsets: list) -> None:
        """A collection's end, and its parts."""
        at = _FIELDS * number
        self.meta[at + 1] = end
        self.meta[at + 4], self.meta[at + 5] = len(self.part_values), len(values)
        if keys is not None:
            self.part_keys.extend(keys)
        else:
            self.part_keys.extend([None] * len(values))
        self.part_values.extend(values)
        self.part_offsets.extend(offsets)
        self.meta[at + 3] = fingerprint(Written(self, number))


def fingerprint(written: Written) -> int:
    """A collection's contents, keys in order, as a number: equal while it is unchanged. A large
    one is pickled into a hash a frame at a time: a whole pickle of it would take about its
    size in memory again."""
    if written.end - written.start < _LARGE:
        return hash(pickle.dumps(written.value, protocol=pickle.HIGHEST_PROTOCOL))
    digest = hashlib.blake2b(digest_size=8)
    pickler = pickle.Pickler(_Sink(digest.update), protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True  # no memo of every object met: the data is a tree (aliases are not read here)
    pickler.dump(written.value)
    return int.from_bytes(digest.digest(), "big", signed=True)


_LARGE = 1 << 20  # characters of text


class _Sink:
    def __init__(self, write):
        self.write = write


# CPython shares the empty string, one-character strings, small ints, booleans and None:
# such a value says nothing of where it was written.
def _own_object(value: Any) -> bool:
    kind = type(value)
    return (kind is str and len(value) > 1) or kind is float or (kind is int and not -5 <= value <= 256)


_RESOLVER = Resolver()
_CONSTRUCTOR = SafeConstructor()


def _scalar(event: yaml.ScalarEvent) -> tuple[Any, bool]:
    """A scalar's value as load_yaml reads it (PyYAML's safe resolver and constructor), and
    whether it is text written as text (not a date kept as the text written, say)."""
    tag = _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag == STR_TAG or tag in TEXT_TAGS:
        return event.value, tag == STR_TAG
    return _CONSTRUCTOR.construct_object(yaml.ScalarNode(tag, event.value)), False


def read_yaml_written(text: str, where: bool = True) -> tuple[Any, WrittenDocument] | None:
    """The plain data of a YAML document, its comments and (with `where`) where each value was
    written, collections with their fingerprints; None when the document is not plain data
    (see the module's docstring) or not valid YAML."""
    try:
        return _read(text, where)
    except (yaml.YAMLError, _NotPlain):
        return None


class _NotPlain(Exception):
    pass


def _hashes(text: str) -> list[int]:
    """Where each `#` that starts a comment, unless it is inside a scalar, stands; then a last
    one past the end."""
    found, at = [], text.find("#")
    while at >= 0:
        if at == 0 or text[at - 1] in " \t\n":
            found.append(at)
        at = text.find("#", at + 1)
    found.append(len(text) + 1)
    return found


def _read(text: str, where: bool) -> tuple[Any, WrittenDocument]:
    written = WrittenDocument()
    comments = written.comments
    hashes = _hashes(text)
    next_hash, next_at = 0, hashes[0]
    # per open collection: [value, its number (None without `where`), is it a mapping, pending key, key start,
    # key end, and its parts so far: keys, values, offsets]
    stack: list[list] = []
    frame = None
    root, documents = None, 0
    scalar_event, alias_event, document_start = yaml.ScalarEvent, yaml.AliasEvent, yaml.DocumentStartEvent
    starts, ends = (yaml.MappingStartEvent, yaml.SequenceStartEvent), (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    for event in yaml.parse(text, Loader=safe_loader()):
        kind = type(event)
        start = event.start_mark.index
        while next_at < start:  # a `#` after the last event, before this one: a comment
            comments[_comment_at(text, next_at)] += 1
            next_hash += 1
            next_at = hashes[next_hash]
        if kind is scalar_event:
            end = event.end_mark.index
            while next_at < end:  # inside the scalar: text
                next_hash += 1
                next_at = hashes[next_hash]
            if event.anchor or event.tag is not None:
                raise _NotPlain
            if frame is not None and frame[2] and frame[3] is None:  # a key
                key = event.value
                if key in frame[0] or (key == "<<" and not event.style):
                    raise _NotPlain  # a repeated key, or a merge
                frame[3], frame[4], frame[5] = key, start, end
                continue
            value, as_text = _scalar(event)
            # A text written plain on one line (its style is "") is its value.
            if where and _own_object(value) and (event.style or not as_text or "\n" in event.value):
                written.add(value, start, end, event.start_mark.column, event.style)
        elif kind in starts:
            if event.anchor or (event.tag is not None and not event.implicit) or len(stack) >= MAX_YAML_DEPTH:
                raise _NotPlain
            if frame is not None and frame[2] and frame[3] is None:
                raise _NotPlain  # a key that is a collection
            value = {} if kind is starts[0] else []
            number = written.add(value, start, 0, event.start_mark.column, bool(event.flow_style)) if where else None
        elif kind in ends:
            if where:
                written.close(frame[1], event.end_mark.index, frame[6], frame[7], frame[8])
            stack.pop()
            frame = stack[-1] if stack else None
            continue
        elif kind is alias_event:
            raise _NotPlain
        else:
            if kind is document_start:
                documents += 1
                if documents > 1:
                    raise _NotPlain
            continue
        if frame is None:
            root = value
        elif frame[2]:
            frame[0][frame[3]] = value
            if where:
                frame[6].append(frame[3])
                frame[7].append(value)
                frame[8].extend((frame[4], frame[5], start))
            frame[3] = None
        else:
            if where:
                frame[7].append(value)
                frame[8].extend((start, start, start))
            frame[0].append(value)
        if kind in starts:
            mapping = kind is starts[0]
            frame = [value, number, mapping, None, 0, 0, [] if mapping else None, [], []]
            stack.append(frame)
    if root is None:
        raise _NotPlain  # an empty document
    for at in hashes[next_hash:-1]:
        comments[_comment_at(text, at)] += 1
    return root, written


def _comment_at(text: str, at: int) -> str:
    end = text.find("\n", at)
    return text[at:end if end >= 0 else len(text)].rstrip()
