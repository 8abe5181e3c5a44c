"""The workspace file a `tests`-era eval file (or one of its tests) names (`workspace: PATH`),
read as AgentV v4.42.4 reads it: it must exist, and its `repos` may not hold the keys that
release removed (`source`, `checkout`, `clone`; the eval file's own `workspace.repos` are its
schema's to check). Said at the eval file's `workspace`, naming the workspace file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..cases import items
from ..problems import Problem
from ..reference_files import FileReferenceError, read_regular, segment_text
from ..references import find_repo_root
from ..schemas import load_schema
from ..sources import Record, load_yaml, problem_at


def check_workspace_files(record: Record, allow_outside_root: bool = False) -> Iterator[Problem]:
    data = record.data if isinstance(record.data, dict) else {}
    places = [(("workspace",), data.get("workspace"))]
    places += [(("tests", index, "workspace"), test.get("workspace")) for index, test in items(data.get("tests"))]
    for path, written in places:
        if isinstance(written, str) and written.strip():
            yield from _workspace_file_problems(record, path, written, allow_outside_root)


def _workspace_file_problems(record: Record, path: tuple, written: str, allow_outside_root: bool) -> Iterator[Problem]:
    folder = Path(record.file).parent
    try:
        found = read_regular(folder / written, "the workspace file", find_repo_root(folder.resolve()), allow_outside_root)
        read = None if found is None else load_yaml(segment_text(found[1], found[0]), str(found[0]))
    except (FileReferenceError, OSError) as exc:
        yield problem_at(record, path, f"cannot read the workspace file {written!r}: {exc}", code="file-reference")
        return
    if read is None:
        yield problem_at(record, path, f"the workspace file {written!r} does not exist",
                         hint="write the path from this file's folder", code="file-reference")
        return
    if read.error is not None:
        yield read.error
        return
    repos = read.data.get("repos") if isinstance(read.data, dict) else None
    removed = load_schema("eval-tests")["$defs"]["workspace_repo"]["properties"]
    for index, repo in items(repos):
        for key in (k for k in removed if k in repo):
            yield problem_at(record, path, f"the workspace file {written!r}: repos[{index}].{key} was removed within "
                             f"this era (AgentV v4.42.4 rejects it): {removed[key]['removed']}", code="removed-key")
