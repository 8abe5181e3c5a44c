"""The workspace file a `tests`-era eval file (or one of its tests) names (`workspace: PATH`),
read as AgentV v4.42.4 reads it: it must exist, and its `repos` may not hold the keys that
release removed (`source`, `checkout`, `clone`; the eval file's own `workspace.repos` are its
schema's to check). Said at the eval file's `workspace`, naming the workspace file.
"""

from __future__ import annotations

from typing import Iterator

from ..cases import items
from ..problems import Problem
from ..schemas import load_schema
from ..sources import Record, problem_at
from .explain import removed_key_message
from .referenced import read_named_yaml


def check_workspace_files(record: Record, allow_outside_root: bool = False,
                          repo_keys_removed: bool = True) -> Iterator[Problem]:
    """The workspace files' problems; `repo_keys_removed`: whether the release checked for
    refuses `source`, `checkout` and `clone` (eras/releases.REPO_SOURCE_REMOVED)."""
    data = record.data if isinstance(record.data, dict) else {}
    places = [(("workspace",), data.get("workspace"))]
    places += [(("tests", index, "workspace"), test.get("workspace")) for index, test in items(data.get("tests"))]
    for path, written in places:
        if isinstance(written, str) and written.strip():
            yield from _workspace_file_problems(record, path, written, allow_outside_root, repo_keys_removed)


def _workspace_file_problems(record: Record, path: tuple, written: str, allow_outside_root: bool,
                             repo_keys_removed: bool) -> Iterator[Problem]:
    workspace, problem = read_named_yaml(record, path, written, "the workspace file", allow_outside_root)
    if problem is not None:
        yield problem
        return
    if not repo_keys_removed:
        return
    repos = workspace.get("repos") if isinstance(workspace, dict) else None
    removed = load_schema("eval-tests")["$defs"]["workspace_repo"]["properties"]
    for index, repo in items(repos):
        for key in (k for k in removed if k in repo):
            yield problem_at(record, path, f"the workspace file {written!r}, repos[{index}]: "
                             + removed_key_message(key, removed[key]["removed"], current=False), code="removed-key")
