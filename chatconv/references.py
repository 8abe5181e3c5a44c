"""File references of eval files (SPEC §2): where a reference points, the text it brings, and
guideline patterns: whether a glob is sound and which files it makes guidelines.

validate checks references and patterns with these; prompt reads them with these.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .kinds import CONFIG_FILE_NAMES
from .limits import LIMITS, size_text
from .problems import ChatconvError, Problem


class FileReferenceError(Exception):
    """A file reference that cannot be used; `hint` says what to do. Callers add the position."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message = message
        self.hint = hint


def find_repo_root(start: Path) -> Path:
    """The nearest folder at or above `start` that holds `.git`, else `start` itself."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


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
    (through `..` or a symlink) and that is not allowed.
    """
    root = root.resolve()
    if value.startswith("/"):
        folders = [root]
        relative = value.lstrip("/")
    else:
        folders = search_folders(eval_dir, root)
        relative = value
    try:
        return _look_up(value, relative, folders, root, allow_outside_root)
    except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: a symlink loop (Python 3.11)
        raise _lookup_error(value, exc) from None


def _look_up(value: str, relative: str, folders: list[Path], root: Path, allow_outside_root: bool) -> Path:
    for folder in folders:
        candidate = folder / relative
        if candidate.is_file():
            real = candidate.resolve()
            if not allow_outside_root and not real.is_relative_to(root):
                raise FileReferenceError(
                    f"file {value!r} resolves outside the repository root {root} (to {real})",
                    "keep referenced files inside the repository, or pass --allow-outside-root")
            return candidate
    folder_found = next((folder / relative for folder in folders if (folder / relative).is_dir()), None)
    if folder_found is not None:
        raise FileReferenceError(f"file {value!r} is a folder: {folder_found}",
                                 "a file segment names a file, not a folder")
    tried = ", ".join(str(folder) for folder in folders)
    raise FileReferenceError(f"file {value!r} not found; looked in: {tried}",
                             "check the path; relative paths start at the eval file's folder")


_SHOWN_CHARACTERS = 80  # of a value that cannot be looked up (it may be very long)


def _lookup_error(value: str, exc: Exception) -> FileReferenceError:
    """The FileReferenceError of a value the file system refuses to look up."""
    shown = value if len(value) <= _SHOWN_CHARACTERS else value[:_SHOWN_CHARACTERS - 3] + "..."
    reason = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__
    hint = "check the path"
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        hint = "shorten the path: a file or folder name holds at most 255 bytes, a path 4096"
    return FileReferenceError(f"file {shown!r} cannot be looked up: {reason[:1].lower()}{reason[1:]}", hint)


def read_segment_text(path: Path) -> str:
    """A file's text: UTF-8 with a BOM removed, CRLF and CR as LF, trailing white space removed."""
    try:
        data = _read_within_limit(path)
    except OSError as exc:
        raise FileReferenceError(f"file {str(path)!r} cannot be read: {exc.strerror}",
                                 "check the file's permissions") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileReferenceError(f"file {str(path)!r} is not UTF-8 (byte {exc.start})",
                                 "save the file as UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip()


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


def _read_within_limit(path: Path) -> bytes:
    """The file's bytes; FileReferenceError when it holds more than --max-file-bytes (a 2 GB
    file, /dev/zero): it is not read whole, checked on the file opened."""
    limit = LIMITS.max_file_bytes
    with open(path, "rb") as stream:
        if os.fstat(stream.fileno()).st_size > limit or len(data := stream.read(limit + 1)) > limit:
            raise FileReferenceError(f"file {str(path)!r} is larger than {size_text(limit)} (--max-file-bytes): "
                                     "not read", "reference a smaller file, or raise --max-file-bytes")
    return data
