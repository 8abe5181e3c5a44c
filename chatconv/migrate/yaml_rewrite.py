"""The YAML rewrite: a document of plain data upgraded as chatconv reads it and written by
spans (yaml_spans.py); any other, or one the spans cannot write for certain, through
ruamel.yaml's round trip. Either way comments, quoting, key order, indentation and document
markers stay, and the text is read back to check that it means the migrated data.
"""

from __future__ import annotations

import io
import re
import sys
from collections import Counter
from typing import Any

import orjson

from ..eras import NEWEST
from ..kinds import detect_kind
from ..limits import LIMITS
from ..problems import ChatconvError
from ..sources import Record, cycle_collector_paused, decode_utf8, file_too_large, load_yaml
from ..sources.yaml_nodes import read_yaml_written
from .lines import BadRecord, try_upgrade
from .registry import Refused, upgrade_record
from .yaml_spans import Unsupported, rewrite_by_spans


def migrate_yaml(data: bytes, file: str, to_era: str | None = None) -> tuple[bytes, list, Any]:
    """Upgrade a YAML document with ruamel.yaml's round trip, so that comments, quoting and key
    order stay (an eval file up to `to_era`, None: the newest). What it must mean is told first
    from chatconv's own reading (merges and aliases expanded, within the limits validate keeps);
    the rewrite is read back and must mean that. Returns the bytes, the migrations applied and
    the document as chatconv reads it (upgraded)."""
    if len(data) > LIMITS.max_file_bytes:  # parsed for a round trip, YAML takes some 100 times its size
        raise BadRecord(file_too_large(file).message, "too-large")
    # ruamel.yaml's round trip makes millions of objects: the collector's passes over them took
    # about a quarter of the time of a 5 MB file (80 s, 62 s without: benchmarks/bench_large_yaml.py).
    with cycle_collector_paused():
        return _migrate_yaml(data, file, to_era)


def _migrate_yaml(data: bytes, file: str, to_era: str | None) -> tuple[bytes, list, Any]:
    try:
        text = decode_utf8(data, file)
    except ChatconvError as exc:
        problem = exc.problems[0]
        raise BadRecord(problem.message, problem.code or "invalid-utf8", (problem.line or 1) - 1) from None
    text = text.replace("\r\n", "\n")  # a line break either way; _like_original writes the file's back
    kind_of = lambda data: detect_kind(data, file)  # noqa: E731
    plain = read_yaml_written(text)
    if plain is None:  # not plain data (or not YAML): load_yaml says what is wrong, the round trip keeps what it shares
        read = _read_yaml(text, file)
        expected, applied = try_upgrade(read.data, kind_of, to_era, read.locate)
        return (_round_trip(text, file, to_era, expected).encode(), applied, expected) if applied else (data, [], expected)
    document, written = plain
    del plain
    expected, applied = try_upgrade(document, kind_of, to_era, lambda path: _read_yaml(text, file).locate(path))
    if not applied:
        return data, [], expected
    try:
        new = rewrite_by_spans(text, written, expected, _yaml_indents(text))
    except Unsupported:
        new = None
    comments = written.comments
    del written  # where each value was written: as large as the data, and not needed past here
    if new is None or not _reads_back(new, expected, comments):
        new = _round_trip(text, file, to_era, expected)
    return new.encode(), applied, expected


def _reads_back(new: str, expected: Any, comments: Counter) -> bool:
    """Whether the text written by spans (yaml_spans.py) reads back as the migrated data and
    keeps every comment of the file."""
    back = read_yaml_written(new, where=False)
    return back is not None and _same_data(back[0], expected) and back[1].comments == comments


def _same_data(one: Any, other: Any) -> bool:
    """Equal, keys in the same order."""
    try:
        return orjson.dumps(one) == orjson.dumps(other)
    except TypeError:  # an integer beyond 64 bits
        return one == other and repr(one) == repr(other)


def _round_trip(text: str, file: str, to_era: str | None, expected: Any) -> str:
    """The migrated document written by ruamel.yaml's round trip, read back to mean `expected`."""
    yaml = _round_trip_yaml(text)
    try:
        document = yaml.load(text)
    except Exception as exc:  # ruamel.yaml is stricter in places (a duplicate key, say)
        raise BadRecord(f"invalid YAML: {' '.join(str(exc).split())}", "invalid-yaml") from None
    shares = _has_merge_keys(document) or _has_aliases(document)  # told before a migration unshares them
    try:
        document, _ = upgrade_record(document, detect_kind(document, file), to_era or NEWEST.NAME)
    except Refused as exc:  # the plain reading was not refused, so the two readings differ
        raise BadRecord(str(exc), "no-newer-home") from None
    except Exception as exc:  # ruamel.yaml fails to delete a key that a merge shares, say
        raise _refusal(shares, f"cannot be migrated: {type(exc).__name__}: {exc}", "legacy-shape") from None
    out = io.StringIO()
    yaml.dump(document, out)
    written = _keep_document_markers(out.getvalue(), text)
    if _read_yaml(written, file).data != expected:
        raise _refusal(shares, "the rewritten YAML would not mean what the file means as read (a date or "
                       "tagged value read otherwise): migrate it by hand", "not-written")
    return written


def _read_yaml(text: str, file: str) -> Record:
    """The document as validate and prompt read it (its data, and where each path stands);
    BadRecord when it cannot be."""
    try:
        record = load_yaml(text, file)
    except ChatconvError as exc:  # aliases that expand without bound
        record = Record(file, 1, error=exc.problems[0])
    problem = record.error or next((p for p in record.problems if p.is_error), None)
    if problem is not None:  # e.g. a duplicate key: which of its values is meant is not known
        raise BadRecord(f"{problem.path}: {problem.message}" if problem.path != "$" else problem.message,
                        problem.code or "invalid-yaml", (problem.line or 1) - 1)
    return record


def _refusal(shares: bool, message: str, code: str) -> BadRecord:
    """Why a document's rewrite failed: edits made through shared nodes, where it has them."""
    if not shares:
        return BadRecord(message, code)
    return BadRecord("uses YAML merge keys (<<) or aliases (*name) that a migration would edit through, changing "
                     "every place that shares them: write the shared keys out, then migrate", "legacy-shape")


_PREAMBLE = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n)+(?=---)")  # comment and blank lines above `---`


def _keep_document_markers(written: str, original: str) -> str:
    """ruamel.yaml drops the comments above a `---` document start (a yaml-language-server
    header, say) and a `...` document end: put them back as they were."""
    preamble = _PREAMBLE.match(original)
    if preamble and written.startswith("---"):
        written = preamble.group() + written
    if re.search(r"\n\.\.\.[ \t]*\n?\Z", original) and not written.rstrip().endswith("\n..."):
        written = written.rstrip("\n") + "\n...\n"
    return written


class _Verbatim(str):
    """A YAML scalar kept as the text it was written as, with its tag."""

    def __new__(cls, text: str, tag: str):
        scalar = super().__new__(cls, text)
        scalar.tag = tag
        return scalar


# Floats and dates are read as the text they were written as, and written back so: ruamel.yaml
# would respell 1e-400 as 0e+000, make 1e400 .inf, invent digits beyond a double's, and read a
# date as a date where chatconv's reader (and so a migration's plain reading) sees text.
_VERBATIM_TAGS = ("tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp")


def _has_aliases(node: Any, seen: set | None = None) -> bool:
    """Whether a container is reached twice: ruamel.yaml reads an alias as the same object."""
    seen = set() if seen is None else seen
    if not isinstance(node, (dict, list)):
        return False
    if id(node) in seen:
        return True
    seen.add(id(node))
    return any(_has_aliases(v, seen) for v in (node.values() if isinstance(node, dict) else node))


def _has_merge_keys(node: Any) -> bool:
    if isinstance(node, dict):
        return bool(getattr(node, "merge", None)) or any(_has_merge_keys(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_merge_keys(v) for v in node)
    return False


def _round_trip_yaml(text: str):
    """A ruamel.yaml round-trip reader and writer set up to write `text` back as it was."""
    from ruamel.yaml import YAML

    yaml = YAML()  # round trip: comments, key order, anchors
    yaml.preserve_quotes = True
    yaml.width = sys.maxsize  # never fold a line that was not folded (folding loses runs of spaces)
    for tag in _VERBATIM_TAGS:
        yaml.constructor.add_constructor(tag, lambda _, node: _Verbatim(node.value, node.tag))
    yaml.representer.add_representer(_Verbatim, lambda r, data: r.represent_scalar(data.tag, str(data)))
    mapping, sequence, offset = _yaml_indents(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.explicit_start = bool(re.match(r"(\s*#[^\n]*\n)*\s*---", text))
    return yaml


_KEY_ONLY = re.compile(r"^([ -]*)[^ #-][^#]*:\s*(#.*)?$")  # `key:` or `- key:`, its value below


def _yaml_indents(text: str) -> tuple[int, int, int]:
    """(mapping, sequence, offset) indentation as ruamel.yaml takes them, read from the first
    block mapping and the first block sequence under a `key:` line (else 2, 2, 0)."""
    mapping = sequence = offset = None
    parent = None  # the column of the previous line's key when that line was `key:` alone
    for line in text.splitlines():
        content = line.lstrip(" ")
        if not content or content.startswith("#"):
            continue
        column = len(line) - len(content)
        if parent is not None:
            if content.startswith("- ") and sequence is None and column >= parent:
                item = content[1:].lstrip(" ")
                offset, sequence = column - parent, len(line) - len(item) - parent
            elif not content.startswith("-") and mapping is None and column > parent:
                mapping = column - parent
        key_only = _KEY_ONLY.match(line)
        parent = len(key_only.group(1)) if key_only else None
    if sequence is None:
        offset, sequence = 0, 2
    return mapping or 2, sequence, offset

