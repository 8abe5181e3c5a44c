"""PyYAML, read as chatconv reads it: its loader, and what is wrong with a YAML text before
anything composes it (yaml.py builds data of what is right): invalid syntax, nesting deeper than
MAX_YAML_DEPTH, an alias inside the node it names, more values than --max-file-bytes allows.
PyYAML is imported when YAML is first read: a run that reads none (a JSONL file) starts some
20 ms sooner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..limits import LIMITS
from ..problems import Problem

if TYPE_CHECKING:
    import yaml

# The C YAML composer, ruamel.yaml (migrate) and the code that walks records recurse once or more
# per level: deeper YAML is refused before it is composed. Far deeper than any hand-written file,
# within the ~245 levels ruamel.yaml reads under Python's recursion limit and the 254 orjson writes.
MAX_YAML_DEPTH = 200
# Each value of a YAML document takes some 600 bytes to read (PyYAML's node and marks, its place
# kept for messages): 1.5M values of a 3 MB flow sequence took 1 GB. A document may hold one
# value per YAML_BYTES_PER_VALUE bytes of --max-file-bytes (a million for 16 MiB: about 600 MB),
# far more than hand-written files hold (a 5 MB eval file holds 350k).
YAML_BYTES_PER_VALUE = 16


def pyyaml():
    """PyYAML, imported when YAML is first read: a run that reads none (a JSONL file) starts
    some 20 ms sooner."""
    import yaml

    return yaml


def safe_loader():
    """PyYAML's safe loader class: the C one where PyYAML was built with libyaml, else the
    pure-Python one (same events, same nodes, slower)."""
    yaml = pyyaml()
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_parse_problem(text: str, file: str) -> Problem | None:
    """Why `text` cannot be composed safely: invalid YAML, or nested deeper than MAX_YAML_DEPTH;
    None when it can be. Call it before anything composes the text (PyYAML, ruamel.yaml).

    Reads the parser's events, which needs no recursion (composing does, in C for PyYAML).
    An alias counts as deep as the node it copies; an alias inside the node it names would copy
    it without end.
    """
    yaml = pyyaml()
    try:
        return _nesting_problem(text, file)
    except yaml.YAMLError as exc:
        return yaml_error_problem(exc, text, file)


def _nesting_problem(text: str, file: str) -> Problem | None:
    yaml = pyyaml()
    loader = safe_loader()
    try:
        return _deepest_problem(yaml.parse(text, Loader=loader), file)
    except yaml.scanner.ScannerError as exc:
        if loader is yaml.SafeLoader or not is_libyaml_depth_limit(exc):
            raise
    # The libyaml of PyYAML 6.0.4's wheels refuses more than 1,000 levels itself, and its scanner
    # reads a line of flow collections ahead of the parser (any `[` may open a key), so that
    # error can come before the event of level MAX_YAML_DEPTH + 1 reaches the loop. The text is
    # too deep either way; the pure-Python parser, which has no limit of its own, says where.
    return _deepest_problem(yaml.parse(text, Loader=yaml.SafeLoader), file)


def is_libyaml_depth_limit(exc: Exception) -> bool:
    """Whether `exc` is libyaml's own refusal of deep nesting (PyYAML 6.0.4's wheels on)."""
    return "exceeded maximum nesting depth" in str(getattr(exc, "problem", ""))


def _deepest_problem(events, file: str) -> Problem | None:
    """The problem at the first event nested deeper than MAX_YAML_DEPTH, at an alias inside the
    node it names, or at the value past the document's share of values; None when there is none."""
    yaml = pyyaml()
    heights: dict[str, int | None] = {}  # anchor -> levels in its node (None while still open)
    stack: list[list] = []  # per open collection: [anchor, levels of its deepest item]
    most, values = LIMITS.max_file_bytes // YAML_BYTES_PER_VALUE, 0
    for event in events:
        values += isinstance(event, yaml.NodeEvent)
        if values > most:
            return _mark_problem(file, event.start_mark, f"the YAML holds more than {most:,} values (each takes "
                                 "some 600 bytes of memory to read)", "split it, write its data as JSON lines, or "
                                 f"raise --max-file-bytes if memory allows ({YAML_BYTES_PER_VALUE} bytes of it a value)")
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append([event.anchor, 0])
            if event.anchor:
                heights[event.anchor] = None
            levels = 0
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, levels = stack.pop()
            levels += 1
            if anchor:
                heights[anchor] = levels
        elif isinstance(event, yaml.AliasEvent):
            levels = heights.get(event.anchor, 0)
            if levels is None:
                return _mark_problem(file, event.start_mark,
                                     f"the alias *{event.anchor} is inside the node it names",
                                     "an alias must name a node written before it")
        else:
            continue
        if len(stack) + levels > MAX_YAML_DEPTH:
            return _mark_problem(file, event.start_mark,
                                 f"YAML nested deeper than {MAX_YAML_DEPTH} levels",
                                 "flatten the data; aliases count as deep as the node they name")
        if stack:
            stack[-1][1] = max(stack[-1][1], levels)
    return None


def _mark_problem(file: str, mark, message: str, hint: str) -> Problem:
    return Problem(file, mark.line + 1, mark.column + 1, "$", message, "error", hint, "invalid-yaml")


def yaml_error_problem(exc: yaml.YAMLError, text: str, file: str) -> Problem:
    """One problem, on one line, for an error of the YAML reader, parser or composer."""
    yaml = pyyaml()
    line = column = 1
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        if mark:
            line, column = mark.line + 1, mark.column + 1
    elif isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        message = f"character #x{exc.character:04x}: {exc.reason}"
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
    else:
        message = str(exc)
    return Problem(file, line, column, "$", "invalid YAML: " + " ".join(message.split()), "error",
                   "fix the YAML syntax at this spot", "invalid-yaml")
