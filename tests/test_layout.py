"""The package's layout: imports follow the data flow, with no circle, and nothing imports the CLI.

Imports are read with `ast` from every module of chatconv, those inside functions included (a
circle closed by a function-level import is still a circle); imports under `if TYPE_CHECKING:`
never run and are left out.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "chatconv"

# The data flow, as ranks: a module may import only from parts of a lower rank (or from its
# own part). sources -> migrate -> cases -> validate -> models -> prompt / recordings ->
# providers / history -> formats (other tools' recordings: import checks what it writes, export
# reads recordings and keeps the providers' rules) -> cli; problems, schemas, messages, workers, eras (which kinds asks to
# tell an eval file) and kinds sit beneath all, and handback (workers' shared memory) and interrupts (signals held) beneath workers;
# pairing (tool calls and results, over messages) beside kinds.
RANKS = {
    "problems": 0, "handback": 0, "interrupts": 0,
    "schemas": 1, "messages": 1, "workers": 1, "eras": 1, "limits": 1,
    "kinds": 2, "cluster": 2, "reference_files": 2, "pairing": 2,
    "sources": 3, "references": 3,
    "migrate": 4,
    "cases": 5,
    "validate": 6,
    "models": 7,
    "prompt": 8, "recordings": 8,
    "providers": 9, "history": 9,
    "formats": 10,
    "cli": 11,
    "__main__": 12, "": 12,  # the package's __init__: the public API
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(name: str) -> bool:
    return (PACKAGE.parent / name.replace(".", "/") / "__init__.py").exists()


def _exists(name: str) -> bool:
    return _is_package(name) or (PACKAGE.parent / (name.replace(".", "/") + ".py")).exists()


def _runs(node: ast.AST, parents: dict) -> bool:
    """False for an import under `if TYPE_CHECKING:`."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return False
    return True


def _imports(path: Path) -> set[str]:
    """The chatconv modules `path` imports, resolved (a name imported from a package that is a
    module of it counts as that module)."""
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or not _runs(node, parents):
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("chatconv")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if not source.startswith("chatconv"):
                continue
            found.add(source)
            found |= {f"{source}.{alias.name}" for alias in node.names if _exists(f"{source}.{alias.name}")}
    return {module for module in found if _exists(module)} - {name}


@cache  # the package does not change while the tests run
def _graph() -> dict[str, set[str]]:
    return {_module_name(path): _imports(path) for path in sorted(PACKAGE.rglob("*.py"))}


def _part(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def test_every_part_of_the_package_has_a_rank():
    assert {_part(module) for module in _graph()} <= set(RANKS)


def test_imports_follow_the_data_flow():
    against = [f"{module} imports {imported}" for module, imports in _graph().items() for imported in imports
               if _part(imported) != _part(module) and RANKS[_part(imported)] >= RANKS[_part(module)]]
    assert against == []


def test_nothing_imports_the_cli():
    importers = [module for module, imports in _graph().items()
                 if any(_part(i) == "cli" for i in imports) and _part(module) not in ("cli", "__main__")]
    assert importers == []


def test_there_is_no_import_circle():
    graph = _graph()
    state: dict[str, str] = {}
    circles = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                circles.append(" -> ".join(trail[trail.index(imported):] + [imported]))
            elif imported not in state:
                visit(imported, trail + [imported])
        state[module] = "done"

    for module in graph:
        if module not in state:
            visit(module, [module])
    assert circles == []


@pytest.mark.parametrize("source, expected", [
    ("from ..sources import Record\n", {"chatconv.sources"}),
    ("def f():\n    from ..validate import check_record\n", {"chatconv.validate"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .load import X\n", set()),
    ("from . import evalcases\n", {"chatconv.eras", "chatconv.eras.evalcases"}),
])
def test_the_import_reader_sees_what_python_runs(tmp_path, monkeypatch, source, expected):
    # The checks above are only as good as this reader: module-level, function-level and
    # relative imports count, TYPE_CHECKING ones do not.
    folder = {"from . import evalcases\n": "eras/__init__.py"}.get(source, "prompt/example.py")
    path = PACKAGE / folder
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: source)
    assert _imports(path) == expected - {_module_name(path)}
