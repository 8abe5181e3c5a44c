"""The cases of an eval file of any era, as one internal case (SPEC §1a).

Each era's reader (a module here named after the era) turns its file's cases into `Case`s:
input messages in the internal shape of SPEC §1 (`{role, content}`, content a string or a list
of `{type: text|file, value}` segments), expected messages, criteria, graders, and where each
part is written, so that a problem found later (a missing file, say) names the file's own path.
validate checks what the cases refer to; prompt builds their prompts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any, BinaryIO, Callable

from ..eras import Era, era_of
from ..problems import Problem, json_path
from ..reference_files import open_within, refuse_outside
from ..references import not_followed, open_reference, repository_root, resolve_reference
from ..sources import Position, Record, is_url


@dataclass(frozen=True)
class Source:
    """The file a case is written in (the eval file, or a case file it includes), for problems.
    Its file references are looked up from the eval file's folder all the same (as AgentV does)."""

    file: str
    locate: Callable[[tuple], Position] | None = None

    def problem(self, path: tuple, message: str, hint: str | None, code: str, severity: str = "error") -> Problem:
        line, column = self.locate(path) if self.locate else (None, None)
        return Problem(self.file, line, column, json_path(path), message, severity, hint, code)


@dataclass(frozen=True)
class Lookup:
    """Where an eval file's references are looked up (SPEC §2): its folder, then each parent up
    to the repository root (found once); files outside the root only when allowed."""

    folder: Path
    root: Path
    allow_outside_root: bool = False
    url: str | None = None  # the eval file's, read from a store: its references are not followed

    @classmethod
    def of(cls, record: Record, allow_outside_root: bool = False) -> Lookup:
        if is_url(record.file):
            return cls(Path(), Path(), allow_outside_root, record.file)
        folder = Path(record.file).parent if record.file != "-" else Path.cwd()
        root = repository_root(folder)
        # Outside a repository no root bounds the look-up, as for AgentV's loader there (its
        # validate refuses the file whole: validate/eval_files.py says so, once).
        return cls(folder, root or folder.resolve(), allow_outside_root or root is None)

    def resolve(self, written: str) -> Path:
        """The file `written` names; FileReferenceError when there is none, or it is outside."""
        self._local()
        return resolve_reference(written, self.folder, self.root, self.allow_outside_root)

    def read(self, written: str) -> tuple[Path, bytes]:
        """The real path and bytes of the file `written` names: checked and read from one open
        file (see references.open_reference); FileReferenceError as for resolve."""
        self._local()
        return open_reference(written, self.folder, self.root, self.allow_outside_root)

    def open(self, path: Path, written: str) -> BinaryIO:
        """`path` (a case file, a prompt file) open for reading: the file opened is the one
        checked against the root (see reference_files.open_within)."""
        self._local()
        return open_within(path, self.root, self.allow_outside_root, written)

    def refuse_outside(self, path: Path, written: str) -> None:
        """FileReferenceError when `path` (a glob's match, a case folder) is outside the root."""
        self._local()
        refuse_outside(repr(written), path.resolve(), self.root, self.allow_outside_root)

    def _local(self) -> None:
        if self.url is not None:
            raise not_followed(self.url)


@dataclass
class Case:
    """One case, whatever era it was written in."""

    id: str
    path: tuple  # the case's JSON path in `source`
    source: Source
    messages: list[dict]  # the input, in the internal shape
    # For each input message, where its content is written in `source`; or, for content made
    # from several places (a string `input` with `input_files`), where each segment is written.
    content_paths: list[tuple | list[tuple]]
    expected: list[dict] = field(default_factory=list)  # the reference answer, as messages
    expected_paths: list[tuple | list[tuple]] = field(default_factory=list)  # as content_paths, for `expected`
    criteria: str | None = None  # what a good answer achieves, in words
    graders: list = field(default_factory=list)  # the era's graders (evaluators, assertions, assert), as written
    metadata: dict = field(default_factory=dict)  # `systemPrompt` shapes the prompt
    # A conversation test's turns (`mode: conversation`), as AgentV plays them after `messages`:
    # each {"input", "expected_output"?, "assert"?}, rendered with the test's vars; None for a
    # test of one prompt. window_size: how many earlier exchanges each turn sees (None: all).
    turns: list[dict] | None = None
    window_size: float | None = None

    def file_segments(self):
        """(JSON path in `source`, value) of each file segment of the input and expected messages
        (validate checks both; a prompt reads the input's only)."""
        placed = [*zip(self.messages, self.content_paths), *zip(self.expected, self.expected_paths)]
        for message, where in placed:
            for index, segment in items(message.get("content")):
                value = segment.get("value")
                if segment.get("type") == "file" and isinstance(value, str) and value:
                    yield segment_path(where, index), value


def segment_path(where: tuple | list[tuple], index: int) -> tuple:
    """Where segment `index` of a message's content is written, given the content's place."""
    return where[index] if isinstance(where, list) else where + (index, "value")


@dataclass
class EvalCases:
    """What read_cases gives: the cases in file order, and the problems met reading them (a case
    file that cannot be read, a construct chatconv does not support); errors leave a case out."""

    era: Era
    cases: list[Case]
    problems: list[Problem]
    lookup: Lookup  # where the cases' file references are looked up


def read_cases(record: Record, era: Era | None = None, allow_outside_root: bool = False) -> EvalCases:
    """The cases of an eval file read as `record` (valid against its era's schema, or read
    defensively: a case the schema would refuse is left to it), in the era given or its own.
    Case files, prompt files and default tests are found as file references are (`Lookup`)."""
    era = era or era_of(record.data)
    reader = import_module(f"{__name__}.{era.NAME}")
    lookup = Lookup.of(record, allow_outside_root)
    cases: list[Case] = []
    problems: list[Problem] = []
    for item in reader.read(record, lookup):
        (cases if isinstance(item, Case) else problems).append(item)
    return EvalCases(era, cases, problems, lookup)


def items(value: Any):
    """(index, item) for the objects of a list; anything else holds none (the schema's to report)."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield index, item


__all__ = ["Case", "EvalCases", "Lookup", "Source", "items", "read_cases", "segment_path"]
