"""Guideline patterns: where they come from, whether they are sound, and what they match."""

from __future__ import annotations

from pathlib import Path

from ..problems import ChatconvError, Problem
from ..sources import iter_records
from .files import search_folders

CONFIG_NAMES = (".agentv/config.yaml", "chatconv.yaml")


def pattern_problem(pattern: str) -> str | None:
    """Why a glob can never work as meant, or None when it is sound."""
    if not isinstance(pattern, str) or not pattern.strip():
        return "a guideline pattern must be a non-empty string"
    if pattern.startswith("/"):
        return "patterns match paths relative to the repository root; drop the leading '/'"
    depth = 0
    for char in pattern.replace("\\[", "").replace("\\]", ""):
        depth += char == "["
        depth -= char == "]" and depth > 0
    if depth:
        return "an unclosed '[' in the pattern"
    return None


def check_patterns(patterns: list[str], where: str) -> list[str]:
    """The patterns, after refusing any that cannot work (ChatconvError names `where`)."""
    problems = [Problem(where, None, None, "$.guideline_patterns", f"bad glob {p!r}: {reason}")
                for p in patterns if (reason := pattern_problem(p))]
    if problems:
        raise ChatconvError(problems)
    return list(patterns)


def is_guideline(value: str, file: Path | None, root: Path, patterns: list[str]) -> bool:
    """True when the file's path from the root, or its value as written, matches a pattern."""
    if not patterns:
        return False
    from wcmatch import glob  # here: only cases with guideline patterns need it (start-up time)

    # `**` spans folders, `*` stays within one, dot-folders such as .github/ match, case matters.
    flags = glob.GLOBSTAR | glob.DOTGLOB | glob.CASE
    candidates = [value[2:] if value.startswith("./") else value]
    if file is not None and file.resolve().is_relative_to(root):
        candidates.append(file.resolve().relative_to(root).as_posix())
    return any(glob.globmatch(c, patterns, flags=flags) for c in candidates)


def find_config(eval_dir: Path, root: Path) -> Path | None:
    """The nearest .agentv/config.yaml or chatconv.yaml from the eval file's folder up to the root."""
    for folder in search_folders(eval_dir, root):
        for name in CONFIG_NAMES:
            if (folder / name).is_file():
                return folder / name
    return None


def config_patterns(config: Path) -> list[str]:
    """The guideline patterns of a config file, which must be valid against its schema."""
    from ..validate import check_record

    [record] = iter_records(config)
    problems = [record.error] if record.error else [p for p in check_record(record, "config") if p.is_error]
    if problems:
        raise ChatconvError(problems)
    return check_patterns(record.data.get("guideline_patterns", []), str(config))
