"""File references of eval files (SPEC §2): where a reference points, the text it brings (read
through reference_files, which opens and reads a referenced file safely), and guideline
patterns: whether a glob is sound and which files it makes guidelines.

validate checks references and patterns with these; prompt reads them with these.
"""

from __future__ import annotations

import errno
from pathlib import Path

from .kinds import CONFIG_FILE_NAMES
from .problems import ChatconvError, Problem
from .reference_files import (FileReferenceError, open_within, read_regular, read_segment_text, refuse_outside,
                              segment_text)

# The reading names are reference_files'; they stay importable from here, where they were first.
__all__ = ["FileReferenceError", "check_patterns", "find_config", "find_repo_root", "is_guideline", "not_followed",
           "open_reference",
           "open_within", "pattern_problem", "read_reference", "read_segment_text", "refuse_outside", "repository_root",
           "resolve_reference", "search_folders", "segment_text"]


def find_repo_root(start: Path) -> Path:
    """The nearest folder at or above `start` that holds `.git`, else `start` itself."""
    return repository_root(start) or start.resolve()


def repository_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` that holds `.git`; None outside a repository
    (AgentV's validate then refuses every eval file: "git repository root not found")."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def search_folders(eval_dir: Path, root: Path) -> list[Path]:
    """The eval file's folder, then each parent up to and including the repository root."""
    eval_dir, root = eval_dir.resolve(), root.resolve()
    folders = [eval_dir]
    if eval_dir.is_relative_to(root):
        for parent in eval_dir.parents:
            if not parent.is_relative_to(root):
                break
            folders.append(parent)
    return folders


def resolve_reference(value: str, eval_dir: Path, root: Path, allow_outside_root: bool = False) -> Path:
    """The file a segment's `value` names, looked up as SPEC §2 says.

    Raises FileReferenceError when no candidate exists, when the value cannot be looked up at
    all (a name too long, say), or when the file found resolves outside the repository root
    (through `..` or a symlink) and that is not allowed. It only says where the file is: to read
    it, use read_reference (a check here and a read later could see two different files).
    """
    root = root.resolve()
    folders, relative = _lookup_folders(value, eval_dir, root)
    try:
        return _look_up(value, relative, folders, root, allow_outside_root)
    except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: a symlink loop (Python 3.11)
        raise _lookup_error(value, exc) from None


def read_reference(value: str, eval_dir: Path, root: Path, allow_outside_root: bool = False) -> tuple[Path, str]:
    """The file a segment's `value` names (its real path) and its text (see segment_text), as
    open_reference finds, checks and reads it."""
    real, data = open_reference(value, eval_dir, root, allow_outside_root)
    return real, segment_text(data, real)


def open_reference(value: str, eval_dir: Path, root: Path, allow_outside_root: bool = False,
                   search: bool = True) -> tuple[Path, bytes]:
    """The file `value` names (its real path) and its bytes, looked up as resolve_reference
    looks it up and refused as it refuses; without `search`, only from `eval_dir` (as AgentV
    finds the workspace file of an eval file and the providers file of a config).

    The file is opened once; the root check is made on the file opened and the bytes are read
    from it. A symlink swapped between a check by name and a read by name could make the read
    land outside the root (on /etc/passwd, say); here what is read is what was checked.
    """
    root = root.resolve()
    folders, relative = _lookup_folders(value, eval_dir, root) if search else ([eval_dir], value)
    try:
        for folder in folders:
            found = read_regular(folder / relative, f"file {value!r}", root, allow_outside_root)
            if found is not None:
                return found
    except (OSError, RuntimeError, ValueError) as exc:  # the look-up's: a name too long, say
        raise _lookup_error(value, exc) from None
    raise _not_found(value, relative, folders)


def _lookup_folders(value: str, eval_dir: Path, root: Path) -> tuple[list[Path], str]:
    """Where `value` is looked up (SPEC §2) and the path looked up in each: an absolute value
    from the root only, a relative one from the eval file's folder up to the root."""
    if value.startswith("/"):
        return [root], value.lstrip("/")
    return search_folders(eval_dir, root), value


def _look_up(value: str, relative: str, folders: list[Path], root: Path, allow_outside_root: bool) -> Path:
    for folder in folders:
        candidate = folder / relative
        if candidate.is_file():
            refuse_outside(f"file {value!r}", candidate.resolve(), root, allow_outside_root)
            return candidate
    raise _not_found(value, relative, folders)


def _not_found(value: str, relative: str, folders: list[Path]) -> FileReferenceError:
    """The FileReferenceError of a value no folder holds as a regular file: the first thing
    found that is no such file (a folder, a pipe, a device) is named, else every folder tried."""
    try:
        found = next((folder / relative for folder in folders if (folder / relative).exists()), None)
        is_folder = found is not None and found.is_dir()
    except OSError as exc:
        return _lookup_error(value, exc)
    if is_folder:
        return FileReferenceError(f"file {value!r} is a folder: {found}",
                                  "a file segment names a file, not a folder")
    if found is not None:
        return FileReferenceError(f"file {value!r} is not a regular file: {found}",
                                  "name a regular file, not a pipe or a device")
    tried = ", ".join(str(folder) for folder in folders)
    return FileReferenceError(f"file {value!r} not found; looked in: {tried}",
                              "check the path; relative paths start at the eval file's folder")


def not_followed(url: str) -> FileReferenceError:
    """The FileReferenceError of a reference in an eval file read from a URL (s3://): references
    are looked up in a checkout's folders, as AgentV, which reads eval files from one, does."""
    return FileReferenceError("not followed: the eval file was read from a URL, and references are looked up "
                              "in a repository's folders", "validate a copy of the folder to check its references "
                              f"(e.g. aws s3 sync {url.rpartition('/')[0]}/ DIR)")


_SHOWN_CHARACTERS = 80  # of a value that cannot be looked up (it may be very long)


def _lookup_error(value: str, exc: Exception) -> FileReferenceError:
    """The FileReferenceError of a value the file system refuses to look up."""
    shown = value if len(value) <= _SHOWN_CHARACTERS else value[:_SHOWN_CHARACTERS - 3] + "..."
    reason = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__
    hint = "check the path"
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        hint = "shorten the path: a file or folder name holds at most 255 bytes, a path 4096"
    return FileReferenceError(f"file {shown!r} cannot be looked up: {reason[:1].lower()}{reason[1:]}", hint)


# ---------------------------------------------------------------------------------------------
# Guideline patterns


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
    problems = [Problem(where, None, None, "$.guideline_patterns", f"bad glob {p!r}: {reason}",
                        code="bad-glob")
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
    """The nearest config file (CONFIG_FILE_NAMES) from the eval file's folder up to the root."""
    for folder in search_folders(eval_dir, root):
        for name in CONFIG_FILE_NAMES:
            if (folder / name).is_file():
                return folder / name
    return None
