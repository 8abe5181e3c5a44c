"""AgentV's releases: the era each one reads, and where releases of one era decide differently.

chatconv gives the verdicts of the newest release of a file's era unless told a release
(`--agentv VERSION`). The releases it has been checked against, with AgentV's own code run in
its test suite, are CHECKED; a boundary between two of them is the release that brought the
change where AgentV's history names it, else the first release after the pull request that
made it (each says which, and how sure).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..problems import UsageError

Version = tuple[int, int, int]


class Release(NamedTuple):
    """An AgentV release (its version), and the era of eval files it reads."""

    version: Version
    era: str
    label: str  # as the user wrote it, or as AgentV tags it: "v4.42.4"

    def before(self, boundary: Version) -> bool:
        return self.version < boundary


# Each era's first release (oldest first), and the release whose verdicts chatconv gives by
# default for the era: its newest (the current era's: the newest code, 5.3.1-next.1 at 58f316ca2).
ERA_STARTS: tuple[tuple[Version, str], ...] = (((0, 20, 0), "evalcases"), ((3, 0, 0), "tests"), ((5, 0, 0), "current"))
NEWEST: dict[str, Version] = {"evalcases": (2, 5, 8), "tests": (4, 42, 4), "current": (5, 3, 1)}
# The releases whose verdicts the test suite compares with AgentV's own (tests/oracles).
CHECKED: tuple[Version, ...] = ((0, 20, 0), (2, 5, 8), (3, 8, 0), (4, 42, 4), (5, 3, 1))

# Where releases of one era differ (the first release that behaves as the newest does):
# - evalcases: 0.20.0's validate refuses a file without `$schema: agentv-eval-v2`; 2.5.8's does
#   not (between them; taken as 1.0.0).
SCHEMA_OPTIONAL: Version = (1, 0, 0)
# - tests: v3.8.0 refuses a message's content as an object, an expected message without
#   content, and an entry of `tests` that is not an object; 4.3.4 takes them (AgentV PR #694,
#   2026-03-22, after v3.8.0: taken as 4.0.0).
OBJECT_CONTENT: Version = (4, 0, 0)
# - tests: the old grader names (llm_judge, llm-judge, code_judge, code-judge) are read as
#   llm-grader and code-grader by v3.8.0 and skipped by v4 (PR #759, 2026-03-25: taken as 4.0.0).
OLD_GRADER_NAMES_SKIPPED: Version = (4, 0, 0)
# - tests: v3.8.0's loader skips a grader of NAMED_TYPES that has no `name`; v4.42.4 names it
#   (between them; taken as 4.0.0, with the renames above).
GRADER_NAMES_OPTIONAL: Version = (4, 0, 0)
# - tests: v3.8.0's validate takes every YAML file outside `.agentv/` for an eval file; v4's
#   only `*.eval.yaml` (PR #1089, 2026-04-13, after 4.12.7: taken as 4.13.0).
EVAL_FILES_BY_NAME: Version = (4, 13, 0)
# - tests: `workspace.repos[].source`, `checkout` and `clone` are refused from PR #1390
#   (2026-06-15; AgentV was at 4.38.0 the next day: taken as 4.38.0).
REPO_SOURCE_REMOVED: Version = (4, 38, 0)

_VERSION = re.compile(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+][0-9A-Za-z.-]+)?")


def parse_release(text: str) -> Release:
    """The release `text` names ("4.42.4", "v3.8.0", "4.42", "5.3.1-next.1"); ValueError says
    what is wrong and what chatconv knows."""
    match = _VERSION.fullmatch(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not an AgentV version (write it as AgentV tags it, e.g. v4.42.4)")
    version = tuple(int(part or 0) for part in match.groups())
    era = None
    for start, name in ERA_STARTS:
        if version >= start:
            era = name
    if era is None:
        first = ".".join(map(str, ERA_STARTS[0][0]))
        raise ValueError(f"chatconv knows AgentV's releases from {first} (2025-12) on, not {text}; "
                         "for older files give --era testcases")
    return Release(version, era, text.strip() if text.strip().startswith("v") else f"v{text.strip()}")


def release_asked(agentv: str | None, era: str | None = None, era_option: str = "--era") -> Release | None:
    """The release `agentv` names, if one; UsageError when it names none chatconv knows, or
    when `era` (an era's name, also asked for with `era_option`) is not the release's."""
    if agentv is None:
        return None
    try:
        release = parse_release(agentv)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if era not in (None, release.era):
        raise UsageError(f"AgentV {release.label} reads {release.era}-era eval files, not {era}: "
                         f"give --agentv or {era_option}, not both")
    return release


def newest_release(era: str) -> Release | None:
    """The release whose verdicts chatconv gives on a file of `era` by default (None: the
    testcases era, older than any release chatconv knows)."""
    version = NEWEST.get(era)
    return None if version is None else Release(version, era, "v" + ".".join(map(str, version)))


def releases_help() -> str:
    """The releases in words, for --help."""
    return "; ".join(f"{name} from {'.'.join(map(str, start))}" for start, name in ERA_STARTS)


__all__ = ["CHECKED", "ERA_STARTS", "EVAL_FILES_BY_NAME", "GRADER_NAMES_OPTIONAL", "NEWEST", "OBJECT_CONTENT", "OLD_GRADER_NAMES_SKIPPED",
           "REPO_SOURCE_REMOVED", "Release", "SCHEMA_OPTIONAL", "newest_release", "parse_release", "release_asked",
           "releases_help"]
