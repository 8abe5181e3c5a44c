"""File segments: where a reference points (SPEC §2) and the text it contributes."""

from __future__ import annotations

import errno
from pathlib import Path


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
        data = path.read_bytes()
    except OSError as exc:
        raise FileReferenceError(f"file {str(path)!r} cannot be read: {exc.strerror}",
                                 "check the file's permissions") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileReferenceError(f"file {str(path)!r} is not UTF-8 (byte {exc.start})",
                                 "save the file as UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip()
