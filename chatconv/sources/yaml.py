"""YAML documents as plain JSON-like data, with each node's line and column.

PyYAML's safe loader (its C one where PyYAML has libyaml) composes the nodes; a builder turns
them into data, refusing what is not plain data (tags other than JSON-like ones, alias bombs) and
reporting repeated keys. Nesting deeper than MAX_YAML_DEPTH is refused before anything composes
the text, at the same place and in the same words on every PyYAML from 6.0 on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..limits import LIMITS
from ..problems import ChatconvError, Problem, json_path
from .record import Position, Record
from .text import empty_file_problem

if TYPE_CHECKING:
    import yaml

# A YAML alias may point at a large node many times over (the "billion laughs"); counting the
# nodes that aliases copy bounds the work and memory of reading any YAML file.
MAX_ALIAS_COPIES = 100_000
# The C YAML composer, ruamel.yaml (migrate) and the code that walks records recurse once or more
# per level: deeper YAML is refused before it is composed. Far deeper than any hand-written file,
# within the ~245 levels ruamel.yaml reads under Python's recursion limit and the 254 orjson writes.
MAX_YAML_DEPTH = 200
# Each value of a YAML document takes some 600 bytes to read (PyYAML's node and marks, its place
# kept for messages): 1.5M values of a 3 MB flow sequence took 1 GB. A document may hold one
# value per YAML_BYTES_PER_VALUE bytes of --max-file-bytes (a million for 16 MiB: about 600 MB),
# far more than hand-written files hold (a 5 MB eval file holds 350k).
YAML_BYTES_PER_VALUE = 16


def _pyyaml():
    """PyYAML, imported when YAML is first read: a run that reads none (a JSONL file) starts
    some 20 ms sooner."""
    import yaml

    return yaml


def safe_loader():
    """PyYAML's safe loader class: the C one where PyYAML was built with libyaml, else the
    pure-Python one (same events, same nodes, slower)."""
    yaml = _pyyaml()
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str, file: str) -> Record:
    """Parse one YAML document with the safe loader, keeping each node's line and column."""
    yaml = _pyyaml()
    problem = yaml_parse_problem(text, file)
    if problem:
        return Record(file, problem.line, error=problem)
    loader = safe_loader()(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as exc:  # e.g. an undefined alias
        problem = _yaml_error_problem(exc, text, file)
        return Record(file, problem.line, error=problem)
    finally:
        loader.dispose()
    if node is None:
        return Record(file, 1, error=empty_file_problem(file))
    builder = _YamlBuilder(file, loader)
    try:
        data = builder.build(node, ())
    except ChatconvError as exc:
        return Record(file, 1, error=exc.problems[0])
    return Record(file, 1, data, problems=builder.problems, positions=builder.positions)


def yaml_parse_problem(text: str, file: str) -> Problem | None:
    """Why `text` cannot be composed safely: invalid YAML, or nested deeper than MAX_YAML_DEPTH;
    None when it can be. Call it before anything composes the text (PyYAML, ruamel.yaml).

    Reads the parser's events, which needs no recursion (composing does, in C for PyYAML).
    An alias counts as deep as the node it copies; an alias inside the node it names would copy
    it without end.
    """
    yaml = _pyyaml()
    try:
        return _nesting_problem(text, file)
    except yaml.YAMLError as exc:
        return _yaml_error_problem(exc, text, file)


def _nesting_problem(text: str, file: str) -> Problem | None:
    yaml = _pyyaml()
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
    yaml = _pyyaml()
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


def _yaml_error_problem(exc: yaml.YAMLError, text: str, file: str) -> Problem:
    """One problem, on one line, for an error of the YAML reader, parser or composer."""
    yaml = _pyyaml()
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



_YAML_TAG = "tag:yaml.org,2002:"
STR_TAG = _YAML_TAG + "str"
_MERGE_TAG = _YAML_TAG + "merge"
TEXT_TAGS = {_YAML_TAG + "timestamp", _YAML_TAG + "binary"}  # kept as the text written (yaml_nodes.py too)
_KNOWN_TAGS = {  # the tags of JSON-like data, by kind of node (the name of its PyYAML class)
    "ScalarNode": {_YAML_TAG + t for t in ("str", "int", "float", "bool", "null")} | TEXT_TAGS,
    "SequenceNode": {_YAML_TAG + "seq"},
    "MappingNode": {_YAML_TAG + "map"},
}


class _YamlBuilder:
    """Turns composed YAML nodes into plain JSON-like data and a path -> position map."""

    def __init__(self, file: str, loader):
        self.file = file
        self.loader = loader
        self.positions: dict[tuple, Position] = {}
        self.problems: list[Problem] = []
        self._reported: set[tuple[int, str]] = set()  # (node, message): aliases visit nodes again
        self._seen: set[int] = set()
        self._copies = 0
        self.yaml = _pyyaml()  # once, not per node

    def _at(self, node) -> Position:
        return (node.start_mark.line + 1, node.start_mark.column + 1)

    def _report(self, node, path: tuple, message: str, hint: str, code: str) -> None:
        if (id(node), message) not in self._reported:
            self._reported.add((id(node), message))
            line, column = self._at(node)
            self.problems.append(Problem(self.file, line, column, json_path(path), message, "error",
                                         hint, code))

    def _visit(self, node, path: tuple) -> None:
        """Count the copies aliases make; too many is an error."""
        if id(node) not in self._seen:
            self._seen.add(id(node))
            return
        self._copies += 1
        if self._copies > MAX_ALIAS_COPIES:
            line, column = self._at(node)
            raise ChatconvError(Problem(
                self.file, line, column, json_path(path),
                f"YAML aliases expand to more than {MAX_ALIAS_COPIES} nodes", "error",
                "remove the nested aliases (&anchor / *alias) that multiply the document", "yaml-alias-bomb"))

    def _check_tag(self, node, path: tuple) -> bool:
        if node.tag in _KNOWN_TAGS[type(node).__name__]:
            return True
        tag = node.tag.replace(_YAML_TAG, "!!", 1)
        self._report(node, path, f"unsupported YAML tag {tag!r}",
                     "remove it; chatconv reads plain data: strings, numbers, lists, mappings",
                     "unsupported-yaml-tag")
        return False

    def build(self, node, path: tuple, key_node=None) -> Any:
        yaml = self.yaml
        self._visit(node, path)
        self.positions.setdefault(path, self._at(key_node or node))
        known_tag = self._check_tag(node, path)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path) if known_tag else node.value
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                items.append(self.build(item, path + (index,)))
            return items
        result = {}
        for key, (key_node, value_node) in self._pairs(node, path).items():
            result[key] = self.build(value_node, path + (key,), key_node)
        return result

    def _scalar(self, node, path: tuple) -> Any:
        # Dates and other non-JSON scalars stay the text that was written.
        yaml = self.yaml
        if node.tag in TEXT_TAGS:
            return node.value
        try:
            return self.loader.construct_object(node)
        except (ValueError, KeyError, yaml.YAMLError):  # e.g. `!!int abc`
            tag = node.tag.replace(_YAML_TAG, "!!", 1)
            self._report(node, path, f"{node.value!r} is not a valid {tag}",
                         f"remove the tag {tag}", "unsupported-yaml-tag")
            return node.value

    def _pairs(self, node, path: tuple) -> dict[str, tuple]:
        """key -> (key node, value node) of a mapping, merge keys (<<) expanded as YAML says: a
        key written in the mapping wins over a merged one wherever it stands, an earlier merge
        source over a later one. Keys come in the order written, merged ones at the merge key."""
        written = {}
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE_TAG:
                key = self._key(key_node, path)
                if key in written:
                    self._report(key_node, path + (key,), f"duplicate key {key!r}",
                                 "a YAML mapping holds each key once; remove one of them", "duplicate-key")
                written[key] = (key_node, value_node)
        pairs = {}
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE_TAG:
                pairs.setdefault(key_node.value, written[key_node.value])
                continue
            for source in self._merge_sources(value_node, path):
                for key, nodes in self._pairs(source, path).items():
                    if key not in written:
                        pairs.setdefault(key, nodes)
        return pairs

    def _key(self, key_node, path: tuple) -> str:
        yaml = self.yaml
        if not isinstance(key_node, yaml.ScalarNode):
            line, column = self._at(key_node)
            raise ChatconvError(Problem(self.file, line, column, json_path(path),
                                        "a mapping key must be a plain string", code="invalid-yaml"))
        self._check_tag(key_node, path)
        return key_node.value  # as written: `yes:` stays "yes", `1:` stays "1"

    def _merge_sources(self, node, path: tuple) -> list:
        """The mappings a merge key's value names; anything else is a problem."""
        yaml = self.yaml
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        sources = []
        for item in items:
            if isinstance(item, yaml.MappingNode):
                self._visit(item, path)
                self._check_tag(item, path)
                sources.append(item)
            else:
                self._report(item, path, "a merge key (<<) takes a mapping or a list of mappings",
                             "name an anchored mapping, e.g. <<: *defaults, or <<: [*a, *b]", "yaml-merge")
        return sources

