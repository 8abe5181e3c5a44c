"""YAML and JSON documents (eval files, mostly): migrated whole, their bytes kept when nothing
changes; JSON rewritten here with its indentation, YAML in yaml_rewrite.py.
"""

from __future__ import annotations

import json
import re

from ..eras import era_index, era_named, era_of
from ..kinds import detect_kind
from ..problems import json_path
from ..sources import UTF8_BOM, Record, duplicate_keys, read_as_records
from .lines import (NOT_EXACT, BadRecord, LineRejected, MigratedLines, Reject, Tally, parse_json, try_upgrade_mapped,
                    written_back)
from .yaml_rewrite import migrate_yaml


def migrate_document(data: bytes, file: str, fmt: str, keep_rejects: bool = False,
                     to_era: str | None = None, field_map: dict | None = None) -> MigratedLines:
    """Migrate a whole YAML or JSON document; its bytes are kept when nothing changes.

    An eval file moves forward to the newest era, or to `to_era` (an era's name); one already at
    or past `to_era` is never moved back (it is counted in Tally.at_era when nothing changed).

    YAML is rewritten with ruamel.yaml's round trip (comments, quoting, key order and the
    file's indentation kept); JSON keeps its indentation, or stays on one line.
    A JSON document that holds an array of records (sources.read_as_records: a stepTraces.json)
    has each element migrated as a record of its own and is written back as an array, its
    elements' keys in order. field_map (JSON only): fields read from other keys, migrated under
    their own keys (see try_upgrade_mapped). A document that cannot be read is rejected whole
    (LineRejected unless keep_rejects).
    """
    tally = Tally(read=1)
    try:
        new, applied, read = migrate_yaml(data, file, to_era) if fmt == "yaml" else _migrate_json(data, to_era,
                                                                                                    field_map)
    except BadRecord as exc:
        reject = Reject(file, 1 + exc.line_offset, str(exc), data, exc.code)
        if not keep_rejects:
            raise LineRejected(reject) from None
        tally.count_rejected(reject)
        return MigratedLines(b"", tally, [reject])
    if applied:
        tally.count_migrated(file, 1, applied)
        new = _like_original(new, data)
    else:
        tally.unchanged = 1
        tally.at_era = int(to_era is not None and _at_or_past(read, to_era))
    return MigratedLines(new, tally, [])


def _at_or_past(record, to_era: str) -> bool:
    era = era_of(record) if detect_kind(record) == "eval-file" else None
    return era is not None and era_index(era) >= era_index(era_named(to_era))


def _migrate_json(data: bytes, to_era: str | None, field_map: dict | None = None) -> tuple[bytes, list, object]:
    record, exact = parse_json(data)
    locate = Record("", 1, text=data.removeprefix(UTF8_BOM)).locate
    if read_as_records(record, field_map):
        applied = []
        for index, element in enumerate(record):
            record[index], done = try_upgrade_mapped(element, detect_kind, to_era, field_map,
                                                     lambda path, index=index: locate((index,) + tuple(path)))
            applied += done
    else:
        record, applied = try_upgrade_mapped(record, detect_kind, to_era, field_map, locate)
    if not applied:
        return data, [], record
    if not exact:
        raise BadRecord(NOT_EXACT, "not-written")
    repeated = duplicate_keys(data)
    if repeated:  # written back, the object would keep only the last value
        path, key = repeated[0]
        raise BadRecord(f"{json_path(path + (key,))}: duplicate key {key!r}; keep one of them, then migrate",
                        "duplicate-key")
    indent = _json_indent(data)
    written = written_back(record, data)  # refuses what cannot be written exactly
    if indent is not None:
        try:
            written = json.dumps(record, indent=indent, ensure_ascii=False).encode()
        except RecursionError:
            raise BadRecord("cannot be written back (RecursionError): it nests too deeply", "not-written") from None
    return written, applied, record


def _json_indent(data: bytes) -> str | None:
    """The indentation of a pretty-printed JSON text (its first indented line), None for one line."""
    match = re.search(rb"\n([ \t]+)\S", data.strip())
    return match.group(1).decode() if match else None


def _like_original(new: bytes, original: bytes) -> bytes:
    """`new` with the original's BOM, line endings (CRLF) and final newline (or its absence)."""
    if b"\r\n" in original:
        new = new.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    newline = b"\r\n" if b"\r\n" in original else b"\n"
    new = new.rstrip(b"\r\n")
    if original.endswith(b"\n"):
        new += newline
    if original.startswith(UTF8_BOM) and not new.startswith(UTF8_BOM):
        new = UTF8_BOM + new
    return new
