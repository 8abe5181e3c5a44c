"""One Problem type for everything chatconv reports, and the one exception family it raises."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Iterable, Literal

Severity = Literal["error", "warning"]
PathPart = str | int

_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


def json_path(parts: Iterable[PathPart]) -> str:
    """`("evalcases", 0, "id")` -> `$.evalcases[0].id`; odd keys are quoted."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.match(part):
            out.append(f".{part}")
        else:
            out.append("[" + repr(part) + "]")
    return "".join(out)


# Every check's stable code, with what it finds. A Problem names its check by one of these, so
# that callers can count and filter problems by kind whatever their wording.
CODES = {
    "unreadable-file": "a file that cannot be read at all: missing, a folder, no permission",
    "file-busy": "a file another chatconv run is rewriting in place: this run leaves it alone",
    "file-changed": "a file that changed (was replaced, grew, was written to) while migrated in place: not replaced",
    "empty-file": "a file or standard input that holds no record",
    "too-large": "a line longer than --max-line-bytes, a file to read whole larger than --max-file-bytes",
    "foreign-encoding": "a UTF-16 or UTF-32 file (chatconv reads UTF-8)",
    "invalid-utf8": "a byte that is not UTF-8",
    "invalid-json": "text that is not JSON (a JSONL line, a JSON file)",
    "invalid-yaml": "text that is not YAML, or YAML nested too deeply or with looping aliases",
    "yaml-alias-bomb": "YAML aliases that expand to more than 100,000 nodes",
    "unsupported-yaml-tag": "a YAML tag other than those of plain data, or a value its tag refuses",
    "yaml-merge": "a YAML merge key (<<) that names no mapping",
    "duplicate-key": "a key written twice in one YAML or JSON object",
    "unknown-kind": "a record whose kind cannot be told",
    "legacy-shape": "an older shape, read as upgraded; `chatconv migrate` rewrites it",
    "unknown-key": "a key the schema does not know (an error where AgentV refuses it, else a warning)",
    "unknown-config-key": "a key a config file's schema does not know (a warning: AgentV's configs grow)",
    "removed-key": "a key the file's era no longer accepts: AgentV's replacement is named",
    "unsupported": "an AgentV construct chatconv does not support (named as AgentV's docs name it)",
    "missing-key": "a required key that is absent",
    "wrong-type": "a value of the wrong JSON type",
    "bad-value": "a value the schema refuses (not one of the allowed values, too small, empty, ...)",
    "too-deep": "a record nested too deeply to be explained or written",
    "duplicate-case-id": "an eval case id used twice in one file",
    "unknown-evaluator": "an evaluator type chatconv does not know (its keys are kept unchecked)",
    "file-reference": "a file an eval or config file names (a segment's, the providers') that is missing, unreadable, or outside the repository",
    "bad-glob": "a guideline or eval pattern that can never match as meant",
    "case-file": "a case file an eval file names that is missing, unreadable, or holds no list of cases",
    "template": "a prompt template chatconv cannot read or render (its syntax)",
    "case-limit": "an eval file whose vars would make more than 100,000 cases (each list of strings in a test's "
                  "vars makes a case per string, and the lists multiply): the test is refused",
    "template-limit": "a template past a limit: 2 s to read and render a case's templates, --max-file-bytes for what it makes, "
                      "integers of 14,000 bits, nesting Python can compile",
    "no-input": "an eval case that has no input messages to build a prompt from",
    "skipped-test": "a test AgentV's loader skips (no input of its own, nothing to grade it by): the run goes on without it",
    "skipped-grader": "a grader (or a rubric item or field of one) that AgentV's loader skips: the test runs without it",
    "dropped-by-agentv": "a conversation setting or a turn's grader AgentV's validate passes and its loader drops (or checks only when the turn is played): the test runs otherwise than written",
    "no-repository": "an eval file that no git repository holds: AgentV's validate refuses it (its file references start at the repository root)",
    "needs-reply": "a conversation turn whose prompt holds an earlier turn's reply, which no recording gave (--replies): its prompt is not built",
    "tool-result-orphan": "a tool-result that answers no earlier tool-call of its conversation",
    "tool-call-unanswered": "a tool-call that no later tool-result of its conversation answers",
    "duplicate-tool-call-id": "a toolCallId used by two tool calls of one conversation",
    "step-order": "a stepIndex that does not follow the previous step of its conversation",
    "no-newer-home": "a key that has no place in the era a file is migrated to: the file is left as it is",
    "not-written": "a value that would not be written exactly (too deep, an integer beyond 64 bits)",
    "memory-cap": "`tools` past --max-memory: a conversation finished early, its waiting calls written unanswered",
    "field-clash": "a --field mapping onto a key the record already has",
    "provider-rule": "a prompt the target provider's API would refuse",
    "blank-text": "a text block of white space only, which Anthropic and Gemini refuse: left out of the body (prompt and export)",
    "part-left-out": "a part the target API has no place for (reasoning without its signature, another provider's server tool, media it cannot take): left out of the body, named",
    "export-changed": "a value export writes otherwise than recorded, in the form the target API takes (tool-call arguments logged as an object, as their JSON text)",
    "usage": "a command-line or library call that cannot be carried out as given",
    "unknown-format": "a record whose format (openai-chat, anthropic, ...) cannot be told, or is not as named",
    "import-refused": "a part of another tool's record that has no faithful place in chatconv's: left out, named",
    "import-changed": "a value of another tool's record read differently from how it is written (kept)",
    "import-empty": "a record of another tool's format that holds no message to import",
    "arguments-not-json": "tool call arguments that are not JSON: kept as a string input",
    "arguments-double-encoded": "tool call arguments encoded as JSON twice: decoded once more",
    "arguments-inexact": "tool call arguments holding an integer beyond 64 bits: kept as a string input",
    "compressed-data": "a .gz or .zst file that does not hold such data, or whose data is cut short or corrupt",
    "bad-archive": "an archive (inspect's .eval zip) that is damaged, or an entry of it that cannot be read",
    "import-skipped": "entries of another tool's record that hold no conversation (OTel spans without messages)",
    "part-kept": "a part of another tool's message with no model-message counterpart: kept whole on its message",
    "no-request": "a response recorded without its request (its step's input was not recorded): no request body is written of it",
    "symlink-skipped": "a symlink in a folder migrate searches that it does not follow (out of the folder, or --in-place)",
}


def shown_name(name: str) -> str:
    """A file name as output shows it. A name's bytes that are not UTF-8 reach Python as lone
    surrogates (os.fsdecode), which no UTF-8 output can hold: they are shown as \\xNN escapes,
    so that `bad\\xff.jsonl` is written, in text and in JSON alike."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        try:
            return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate that stands for no byte
            return name.encode("utf-8", "backslashreplace").decode("utf-8")


# The control characters but tab: C0 (newline, carriage return, BEL, ESC), DEL and C1 (CSI is \x9b).
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with each control character but tab written as `\\xNN`, for text that reaches a
    terminal or a CI log: a file name or a value holding an escape sequence cannot recolour the
    terminal, retitle its window, move its cursor or start a line of its own. (JSON and SARIF
    need no such care: JSON escapes them.)"""
    if text.isprintable():  # nearly every line: one pass in C (tab and the rest are not printable)
        return text
    return _CONTROL.sub(_escaped, text) if _CONTROL.search(text) else text


def _escaped(found: re.Match) -> str:
    return f"\\x{ord(found.group()):02x}"


@dataclass(frozen=True, slots=True)
class Problem:
    """Where (file, line, column, JSON path), what, how bad, how to fix it, and which check
    found it (`code`, one of CODES)."""

    file: str
    line: int | None
    column: int | None
    path: str
    message: str
    severity: Severity = "error"
    hint: str | None = None
    code: str | None = None

    @property
    def place(self) -> tuple[str, int, int]:
        """Where the problem is, for sorting: file, then line, then column (none first)."""
        return self.file, self.line or 0, self.column or 0

    def at(self, line: int | None, column: int | None) -> Problem:
        """This problem at another line and column: a warning said alike of many lines (a
        legacy file's) is made once, then placed (not dataclasses.replace: 3 µs a call)."""
        return Problem(self.file, line, column, self.path, self.message, self.severity, self.hint, self.code)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def to_dict(self) -> dict:
        """The problem as the JSON output shows it: SPEC §7's keys, and `code` added to them."""
        # Not dataclasses.asdict, which deep-copies each value: 20 µs a problem, and a legacy
        # recording has one on every line.
        found = {name: getattr(self, name) for name in _FIELDS}
        found["file"] = shown_name(self.file)
        return found

    @property
    def where(self) -> str:
        """`FILE:LINE:COL` as the text output starts (1 for a line or column not known)."""
        return f"{printable(shown_name(self.file))}:{self.line or 1}:{self.column or 1}"

    def format_text(self) -> str:
        text = f"{self.where}: {self.severity}: {self.path}: {self.message}"
        return printable(f"{text} ({self.hint})" if self.hint else text)


_FIELDS = tuple(field.name for field in fields(Problem))


class ChatconvError(Exception):
    """Bad input the user can fix; carries the problems that say where and why."""

    def __init__(self, problems: Problem | list[Problem]):
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(p.format_text() for p in self.problems))

    def __reduce__(self):
        # Made again from its problems, whatever a subclass's __init__ takes: a worker's error
        # (a worker process's, a cluster's) reaches the run as it was raised. (Exception's own
        # pickling would call __init__ with the text, and fail.)
        return _rebuilt, (type(self), self.args, self.__dict__)


def _rebuilt(cls: type, args: tuple, state: dict) -> ChatconvError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class UnreadableInput(ChatconvError):
    """The input could not be read at all (missing, a folder, no permission): exit status 2."""


class UsageError(ChatconvError):
    """A call that cannot be carried out as given (options that exclude each other, say): the
    CLI shows `message` as a usage error (exit status 2)."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(Problem("chatconv", None, None, "$", message, "error", None, "usage"))
