"""`--format sarif`: the problems as one SARIF 2.1.0 log, which GitHub code scanning (and other
SARIF viewers) show on the lines they name.

One run; its tool is chatconv, whose rules are the codes that occur (CODES gives each its
description); a result per problem. Paths are relative URIs with forward slashes, as code
scanning resolves them against the repository's root: run chatconv from that root.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from urllib.parse import quote

from ..problems import CODES, Problem
from ..validate import Summary
from .progress import hide_progress
from .max_warnings import current_cap
from .reporters import summary_on_stderr, write_json_line

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def artifact_uri(file: str) -> str:
    """`evals/my review.yaml` -> `evals/my%20review.yaml`: a relative URI reference, forward
    slashes (Windows paths too), characters outside RFC 3986's unreserved set percent-encoded.
    An absolute path under the current folder is made relative; another stays a file: URI."""
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:
            return path.as_uri()  # its bytes percent-encoded, those that are not UTF-8 too
    posix = PurePath(os.path.normpath(path)).as_posix()
    return quote(os.fsencode(posix), safe="/")  # a name's bytes that are not UTF-8 as %XX


def sarif_result(problem: Problem, rule_index: dict[str, int], uri: str) -> dict:
    text = f"{problem.path}: {problem.message}" + (f" ({problem.hint})" if problem.hint else "")
    result = {"level": "error" if problem.is_error else "warning", "message": {"text": text},
              "locations": [{"physicalLocation": {
                  "artifactLocation": {"uri": uri},
                  "region": {"startLine": problem.line or 1, "startColumn": problem.column or 1}}}]}
    if problem.code is not None:
        result = {"ruleId": problem.code, "ruleIndex": rule_index[problem.code], **result}
    return result


def sarif_log(problems: list[Problem]) -> dict:
    """The SARIF 2.1.0 log of `problems`, in their order."""
    codes = sorted({problem.code for problem in problems if problem.code is not None})
    rule_index = {code: index for index, code in enumerate(codes)}
    uris = {file: artifact_uri(file) for file in {problem.file for problem in problems}}  # once a file
    # Imported here: importlib.metadata brings email, csv and zipfile, some 20 ms of every start.
    from importlib.metadata import PackageNotFoundError, version

    try:
        tool_version = version("chatconv")
    except PackageNotFoundError:  # run from a source tree that was never installed
        tool_version = "0+unknown"
    driver = {"name": "chatconv", "version": tool_version,
              "rules": [{"id": code, "shortDescription": {"text": CODES.get(code, code)}} for code in codes]}
    return {"$schema": SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": driver},
                      # chatconv counts columns in characters, as Python strings index them
                      "columnKind": "unicodeCodePoints",
                      "results": [sarif_result(problem, rule_index, uris[problem.file]) for problem in problems]}]}


class SarifReporter:
    """The SARIF log on standard output at the end; the summary and counts on standard error.
    --max-warnings holds warnings back here as in the other formats."""

    render = None  # each problem a Problem
    show_files = False  # validate --show-files: the files skipped, on standard error

    def __init__(self):
        self.problems: list[Problem] = []
        self.cap = current_cap()

    def problem(self, problem: Problem) -> None:
        if self.cap.shows(problem):
            self.problems.append(problem)

    def summary(self, summary: Summary) -> None:
        hide_progress()  # standard output may be the terminal the bar is on
        write_json_line(sarif_log(self.problems))
        summary_on_stderr(summary, self.cap, self.show_files)
