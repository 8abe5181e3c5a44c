"""Files: what format a name says, the config that governs a file, and every record of a file
(which files a folder holds: discovery.py)."""

from __future__ import annotations

import io
import os
import stat
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

from ..eras.releases import Release, required_release
from ..kinds import CONFIG_FILE_NAMES
from ..limits import LIMITS
from ..problems import ChatconvError, Problem
from .arrays import element_records
from .batches import iter_line_batches
from .compressed import COMPRESSIONS, without_compression
from .json import duplicate_keys, iter_jsonl, load_json
from .record import Record, problem_at
from .remote import is_url
from .stdin import read_stdin, read_stdin_head
from .text import decode_utf8, empty_file_problem, open_binary, read_whole
from .yaml import load_yaml

JSONL_SUFFIXES = {".jsonl", ".ndjson"}
JSON_SUFFIXES = {".json"}
YAML_SUFFIXES = {".yaml", ".yml"}
# Compressed recordings are searched for in folders too (any file named is read compressed).
COMPRESSED_JSONL_SUFFIXES = {suffix + compressed for suffix in JSONL_SUFFIXES for compressed in COMPRESSIONS}
DATA_SUFFIXES = JSONL_SUFFIXES | JSON_SUFFIXES | YAML_SUFFIXES | COMPRESSED_JSONL_SUFFIXES

def data_suffix(name: str | Path) -> str:
    """The suffix that says what a file holds, lower case: its last (`.jsonl`), or its last two
    when the last is a compression's (`.jsonl.gz`)."""
    name = str(name)
    plain = without_compression(name)
    return (Path(plain).suffix + name[len(plain):]).lower()


def eval_pattern_config(file: str | Path, seen: dict | None = None) -> dict | None:
    """The config (its data) whose `eval_patterns` name `file` an eval file, or None.

    The nearest `.agentv/config.*` walking up from the file's folder to the repository root
    (a folder holding `.git`) counts; its patterns match the file's path relative to the folder
    that holds `.agentv/` (`**` spans folders, `*` does not cross `/`, dot-folders match, case is ignored).
    `seen` keeps the configs found, by folder, across the files of one run. An object's (a URL)
    has none: its store has no repository to walk up.
    """
    if is_url(file):
        return None
    path = Path(file).resolve()
    found = _nearest_agentv_config(path.parent, {} if seen is None else seen)
    if found is None:
        return None
    project, data = found
    patterns = data.get("eval_patterns") if isinstance(data, dict) else None
    patterns = [p for p in patterns if isinstance(p, str) and p] if isinstance(patterns, list) else []
    relative = path.relative_to(project).as_posix()
    matchers = [matcher for matcher in map(_eval_pattern_matcher, patterns) if not isinstance(matcher, str)]
    return data if any(matcher.match(relative) for matcher in matchers) else None


def nearest_config(file: str | Path, seen: dict | None = None) -> dict | None:
    """The data of the `.agentv/config.*` nearest `file` (walking up its folders to the
    repository root), or None (an object's: see eval_pattern_config); `seen` as for eval_pattern_config."""
    if is_url(file):
        return None
    found = _nearest_agentv_config(Path(file).resolve().parent, {} if seen is None else seen)
    return None if found is None else found[1]


def configured_release(file: str, seen: dict | None = None) -> Release | None:
    """The release the `required_version` of `file`'s config puts in force (see
    eras.releases.required_release); None without one, or with one that says no single era
    (the config's own check says what is wrong with one that is no range)."""
    if file == "-":
        return None
    config = nearest_config(file, seen)
    required = config.get("required_version") if isinstance(config, dict) else None
    if not isinstance(required, str):
        return None
    try:
        return required_release(required)
    except ValueError:
        return None


def eval_pattern_problem(pattern: str) -> str | None:
    """Why an `eval_patterns` entry cannot be used (it then matches nothing), or None."""
    matcher = _eval_pattern_matcher(pattern)
    return matcher if isinstance(matcher, str) else None


@lru_cache(maxsize=256)  # each file found under the config asks
def _eval_pattern_matcher(pattern: str):
    """The pattern compiled, or why it cannot be."""
    from wcmatch import glob  # here: only folders under such a config need it
    from wcmatch._wcparse import PatternLimitException  # wcmatch raises it from its private module

    # AgentV matches them with fast-glob, case-insensitively (its example config says so).
    try:
        return glob.compile(pattern, flags=glob.GLOBSTAR | glob.DOTGLOB | glob.IGNORECASE | glob.BRACE)
    except PatternLimitException:
        return "its braces expand to more than 1000 patterns"


def _nearest_agentv_config(folder: Path, seen: dict) -> tuple[Path, dict] | None:
    """(the folder holding `.agentv/`, the config's data) nearest `folder`, up to the repository
    root; a config that cannot be read counts as none here (validating it reports why)."""
    if folder in seen:
        return seen[folder]
    found = None
    config = next((folder / name for name in CONFIG_FILE_NAMES
                   if name.startswith(".agentv/") and (folder / name).is_file()), None)
    if config is not None:
        try:
            record = next(iter_records(config))
        except ChatconvError:
            record = None
        if record is not None and not record.error and isinstance(record.data, dict):
            found = (folder, record.data)
    elif not ((folder / ".git").exists() or folder.parent == folder):
        found = _nearest_agentv_config(folder.parent, seen)
    seen[folder] = found
    return found


def file_format(path: str | Path) -> str:
    """jsonl, json or yaml, from the file name (a compressed file's, `run.jsonl.gz`, is what it
    holds). A file named otherwise (`run.log`, `calls.txt`, no suffix) is told from its first
    lines as standard input is: JSONL when they are whole JSON lines, else YAML (a JSON superset)."""
    named = _named_format(path)
    if named is not None:
        return named
    if not is_regular_file(path):  # a pipe (`<(...)`) cannot be read twice: iter_records tells it as it reads
        return "yaml"
    try:
        with open_binary(path) as stream:
            told, _ = read_stdin_head(stream)
    except (ChatconvError, OSError):  # unreadable: reading it says why
        return "yaml"
    return "jsonl" if told == "jsonl" else "yaml"


def _named_format(path: str | Path) -> str | None:
    """jsonl, json or yaml when the file's name says so (`run.jsonl.gz` holds JSONL), else None."""
    suffix = Path(without_compression(path)).suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in JSON_SUFFIXES:
        return "json"
    return "yaml" if suffix in YAML_SUFFIXES else None


def is_regular_file(path: str | Path) -> bool:
    """Whether `path` is a regular file, which can be looked into before it is read (not `-`, a
    pipe, a FIFO or a device, whose bytes would be used up); an object (a URL) is read again."""
    if is_url(path):
        return True
    try:
        return str(path) != "-" and stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def iter_jsonl_stream(stream, file: str) -> Iterator[Record]:
    """The records of a JSONL stream, one per line that is not blank, read by the one line
    batcher: a line longer than --max-line-bytes is never held (UnreadableInput names it)."""
    for batch in iter_line_batches(stream):
        yield from iter_jsonl(io.BytesIO(batch.data), file, batch.first_line)


def iter_jsonl_file(stream, file: str) -> Iterator[Record]:
    """The records of an open JSONL file (iter_jsonl_stream); a file that holds none is one
    record, whose error says it is empty."""
    empty = True
    for record in iter_jsonl_stream(stream, file):
        empty = False
        yield record
    if empty:
        yield Record(file, 1, error=empty_file_problem(file))


def iter_records(path: str | Path, split: Callable[[Any], bool] | None = None) -> Iterator[Record]:
    """Every record of a file (`-` is standard input), streamed for JSONL.

    split: a JSON document of which split(data) is true holds an array of records (see
    arrays.holds_records): each element is a record of its own (arrays.element_records).
    Raises UnreadableInput when the file cannot be read at all (missing, UTF-16, ...).
    """
    file = str(path)
    if file == "-":
        yield from iter_stdin_records(split)
        return
    fmt = file_format(path)
    with open_binary(path) as stream:
        if not _named_format(path) and not is_regular_file(path):  # `<(...)`, a FIFO: told as stdin is
            yield from iter_stdin_records(split, stream, file)
            return
        if fmt == "jsonl":
            yield from iter_jsonl_file(stream, file)
            return
        document = read_document(stream, file, fmt)
    yield from _split(document, split)


def read_document(stream: BinaryIO, file: str, fmt: str) -> Record:
    """The one JSON or YAML document of an open file (see open_binary): a YAML one is read only
    up to --max-file-bytes, as parsed YAML takes some 50 times its size."""
    return load_document(read_whole(stream, file, LIMITS.max_file_bytes if fmt == "yaml" else None), file, fmt)


def _split(record: Record, split: Callable[[Any], bool] | None) -> Iterator[Record]:
    """The document's record, or its elements' when split says it holds an array of records."""
    # Only JSON documents (they keep their text, which locates each element); not YAML.
    if split is None or record.error is not None or not isinstance(record.text, bytes) \
            or not isinstance(record.data, list) or not split(record.data):
        yield record
    elif not record.data:
        yield Record(record.file, 1, error=Problem(record.file, 1, 1, "$", "the file holds an empty array: no record",
                                                   "error", "a file must hold a record", "empty-file"))
    else:
        yield from element_records(record)



def load_document(data: bytes, file: str, fmt: str) -> Record:
    if fmt == "json":
        record = load_json(data, file)
        if not record.error:
            record.problems = [problem_at(record, path + (key,), f"duplicate key {key!r}", "error",
                                          "a JSON object holds each key once; the last value would win",
                                          code="duplicate-key")
                               for path, key in duplicate_keys(record.text)]
        return record
    try:
        text = decode_utf8(data, file)
    except ChatconvError as exc:
        return Record(file, exc.problems[0].line or 1, error=exc.problems[0])
    return load_yaml(text, file)




def iter_stdin_records(split: Callable[[Any], bool] | None = None, stream: BinaryIO | None = None,
                       file: str = "-") -> Iterator[Record]:
    """Every record of standard input (or of `stream`, a pipe named `file`): its format told from
    its first lines; JSONL streamed a batch at a time, else one document."""
    stdin = read_stdin(stream)
    if stdin.format == "jsonl":
        for batch in stdin.batches():
            yield from iter_jsonl(io.BytesIO(batch.data), file, batch.first_line)
        return
    fmt, data = stdin.document()
    yield from _split(load_document(data, file, fmt), split)
