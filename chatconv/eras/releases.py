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

# Where the prompts differ (prompt/agentv.py):
# - evalcases: 0.20.0's loader drops a message whose content is neither text nor a list and its
#   prompt builder repeats a one-message prompt's code blocks at its end; 2.5.8 writes such
#   content as JSON text and repeats nothing (between them; taken as 1.0.0, with SCHEMA_OPTIONAL).
SNIPPETS_REPEATED_BEFORE: Version = (1, 0, 0)
# - tests: v3.8.0 reads guideline files (the config's `guideline_patterns`) into a block of their
#   own; v4.42.4 has no guidelines, writes a `systemMessage`, and names files by their absolute
#   path for agent providers (between them; taken as 4.0.0).
GUIDELINES_REMOVED: Version = (4, 0, 0)
# - tests: v3.8.0 has no conversation tests; v4.42.4 plays `mode: conversation` tests turn by
#   turn (between them; taken as 4.0.0).
CONVERSATIONS_PLAYED: Version = (4, 0, 0)
# - tests: v3.8.0 puts `${{ NAME }}` in as text; v4.42.4 makes a value that is one such reference
#   alone a boolean or a number where it reads as one (between them; taken as 4.0.0).
ENV_VALUES_TYPED: Version = (4, 0, 0)
# - tests: a test's `vars` are put into its criteria, input, expected output and turns from
#   v4.30.0; v3.8.0 passes them over without a word.
TEST_VARS: Version = (4, 30, 0)

_BOUNDARIES = (SCHEMA_OPTIONAL, OBJECT_CONTENT, OLD_GRADER_NAMES_SKIPPED, GRADER_NAMES_OPTIONAL, EVAL_FILES_BY_NAME,
               REPO_SOURCE_REMOVED, SNIPPETS_REPEATED_BEFORE, GUIDELINES_REMOVED, CONVERSATIONS_PLAYED,
               ENV_VALUES_TYPED, TEST_VARS)

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


# --- a config's `required_version` (a semver range, as npm writes them) ---------------------

_COMPARATOR = re.compile(r"(>=|<=|>|<|=|\^|~>?)?\s*v?(\*|[xX]|\d+)(?:\.(\*|[xX]|\d+))?(?:\.(\*|[xX]|\d+))?"
                         r"(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")
_NEVER: Version = (10**9, 0, 0)  # above any release: a range it satisfies sets no upper bound


def parse_range(text: str) -> list[list[tuple[str, Version]]]:
    """A semver range (`>=4.0.0 <5`, `^4.42.0`, `~4.42`, `4.x`, `1.2.3 - 2.3.4`, `a || b`) as
    alternatives, each a list of (operator, version) that must all hold; ValueError for text
    that is no range. A pre-release tag is read as its release (AgentV tags none but its
    working code, 5.3.1-next.1), where npm orders it just before."""
    alternatives = []
    for part in text.split("||"):
        part = re.sub(r"(>=|<=|>|<|=|\^|~>?)\s+", r"\1", part.strip())
        hyphen = re.fullmatch(r"(\S+)\s+-\s+(\S+)", part)
        tokens = [">=" + hyphen.group(1), "<=" + hyphen.group(2)] if hyphen else part.split()
        checks = []
        for token in tokens or ["*"]:
            match = _COMPARATOR.fullmatch(token)
            if not match:
                raise ValueError(f"{text!r} is not a semver range ({token!r})")
            checks += _comparisons(match.group(1) or "", match.groups()[1:])
        alternatives.append(checks)
    return alternatives


def _comparisons(op: str, parts: tuple) -> list[tuple[str, Version]]:
    given = [int(p) for p in parts if p is not None and p not in "*xX"]
    given = given[:next((i for i, p in enumerate(parts) if p is None or p in "*xX"), 3)]  # up to a wildcard
    low = tuple(given + [0] * (3 - len(given)))
    if not given:
        return [] if op in ("", "=", ">=", "<=", "^", "~", "~>") else [("<", (0, 0, 0))]
    # The first version past what a partial version (4, 4.42) or a caret or tilde allows.
    if op == "^":
        level = next((i for i, n in enumerate(low) if n != 0), len(given) - 1)
        level = min(level, len(given) - 1)
    elif op in ("~", "~>"):
        level = min(1, len(given) - 1) if len(given) > 1 else 0
    else:
        level = len(given) - 1
    high = tuple(low[:level]) + (low[level] + 1,) + (0,) * (2 - level)
    partial = len(given) < 3
    if op in ("^", "~", "~>") or (op in ("", "=") and partial):
        return [(">=", low), ("<", high)]
    if op in ("", "="):
        return [("=", low)]
    if op == ">":
        return [(">=", high)] if partial else [(">", low)]
    if op == "<=":
        return [("<", high)] if partial else [("<=", low)]
    return [(op, low)]  # >= and < of a partial version mean its first release


def satisfies(version: Version, alternatives: list[list[tuple[str, Version]]]) -> bool:
    tests = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<": lambda a, b: a < b,
             "<=": lambda a, b: a <= b, "=": lambda a, b: a == b}
    return any(all(tests[op](version, bound) for op, bound in checks) for checks in alternatives)


def required_release(required: str) -> Release | None:
    """The release a config's `required_version` puts in force: the newest release chatconv
    knows (each era's newest, the checked ones, the boundaries above, the range's own bounds)
    that the range allows,
    when all it allows lie in one era; None when it allows releases of several eras (`>=2.11.0`:
    each file is then read as its own era's newest release reads it). ValueError for text
    that is no range, or a range no release chatconv knows satisfies."""
    alternatives = parse_range(required)
    # A range's own bounds count too: `^2.12.0` names releases chatconv has not met, which read
    # as the era's newest it knows (2.12.0 is an evalcases-era release past every boundary there).
    bounds = {bound if op != ">" else bound[:2] + (bound[2] + 1,)
              for checks in alternatives for op, bound in checks if op in (">=", ">", "=", "<=")}
    bounds = {bound for bound in bounds if bound >= ERA_STARTS[0][0]}  # older than any release chatconv knows
    known = sorted({*CHECKED, *NEWEST.values(), *_BOUNDARIES, *(start for start, _ in ERA_STARTS), *bounds})
    allowed = [version for version in known + [_NEVER] if satisfies(version, alternatives)]
    if not allowed or allowed == [_NEVER]:
        raise ValueError(f"required_version {required!r} allows no AgentV release chatconv knows "
                         f"({releases_help()}; newest {'.'.join(map(str, NEWEST['current']))})")
    releases = [parse_release(".".join(map(str, version))) for version in allowed if version != _NEVER]
    if _NEVER in allowed and releases[-1].era != "current" or len({r.era for r in releases}) > 1:
        return None
    return releases[-1]


def newest_release(era: str) -> Release | None:
    """The release whose verdicts chatconv gives on a file of `era` by default (None: the
    testcases era, older than any release chatconv knows)."""
    version = NEWEST.get(era)
    return None if version is None else Release(version, era, "v" + ".".join(map(str, version)))


def releases_help() -> str:
    """The releases in words, for --help."""
    return "; ".join(f"{name} from {'.'.join(map(str, start))}" for start, name in ERA_STARTS)


__all__ = ["CHECKED", "CONVERSATIONS_PLAYED", "ENV_VALUES_TYPED", "ERA_STARTS", "EVAL_FILES_BY_NAME", "GRADER_NAMES_OPTIONAL", "GUIDELINES_REMOVED", "NEWEST", "OBJECT_CONTENT", "OLD_GRADER_NAMES_SKIPPED",
           "REPO_SOURCE_REMOVED", "Release", "SCHEMA_OPTIONAL", "SNIPPETS_REPEATED_BEFORE", "TEST_VARS", "newest_release", "parse_range", "parse_release",
           "release_asked", "releases_help", "required_release", "satisfies"]
