"""YAML documents as plain JSON-like data, with each node's line and column.

PyYAML's safe loader (its C one where PyYAML has libyaml) composes the nodes; a builder turns
them into data, refusing what is not plain data (tags other than JSON-like ones, alias bombs) and
reporting repeated keys. What is wrong with the text itself (yaml_parse.py: its syntax, nesting
deeper than MAX_YAML_DEPTH, too many values) is found before anything composes it.
"""

from __future__ import annotations

from typing import Any

from ..problems import ChatconvError, Problem, json_path
from .record import Position, Record
from .text import empty_file_problem
from .yaml_parse import pyyaml, safe_loader, yaml_error_problem, yaml_parse_problem

# A YAML alias may point at a large node many times over (the "billion laughs"); counting the
# nodes that aliases copy bounds the work and memory of reading any YAML file.
MAX_ALIAS_COPIES = 100_000


def load_yaml(text: str, file: str) -> Record:
    """Parse one YAML document with the safe loader, keeping each node's line and column."""
    yaml = pyyaml()
    problem = yaml_parse_problem(text, file)
    if problem:
        return Record(file, problem.line, error=problem)
    loader = safe_loader()(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as exc:  # e.g. an undefined alias
        problem = yaml_error_problem(exc, text, file)
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
        self.yaml = pyyaml()  # once, not per node

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

