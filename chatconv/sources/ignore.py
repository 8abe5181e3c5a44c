"""Which files a folder's walk skips as git would: those its `.gitignore` files ignore.

A folder's `.gitignore` applies to that folder and below, a deeper one winning over a higher
one, and within a file the last pattern that matches wins (`!keep.jsonl` takes a file back).
The `.gitignore` files of the folders above the one walked, up to the repository root (the
folder holding `.git`), apply too, as does the root's `.git/info/exclude`. A folder that is
ignored is not entered (git cannot take back a file inside it either).

`walking_everything()` turns the skipping off for what runs inside it (`--no-ignore`).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable, Iterator

# Whether walks skip ignored files, and where a .gitignore that cannot be read is told of.
# A context variable rather than an argument: every command's walk goes through
# files.discover, deep in the library, and --no-ignore is one switch over all of them.
_RESPECT = ContextVar("chatconv_respect_gitignore", default=True)
_REPORT: ContextVar[Callable[[str], None] | None] = ContextVar("chatconv_ignore_report", default=None)


@contextlib.contextmanager
def walking_everything(everything: bool = True, report: Callable[[str], None] | None = None) -> Iterator[None]:
    """Within it, folders are walked whole (`everything`), or skipping ignored files as by
    default; `report` is given the message of each ignore file that cannot be read (else
    a Python warning)."""
    respect, reporter = _RESPECT.set(not everything), _REPORT.set(report)
    try:
        yield
    finally:
        _RESPECT.reset(respect)
        _REPORT.reset(reporter)


@contextlib.contextmanager
def quietly() -> Iterator[None]:
    """Walks as around it, telling nothing of an ignore file that cannot be read: a walk done
    twice (a progress bar's measure first) tells of it once."""
    token = _REPORT.set(lambda message: None)
    try:
        yield
    finally:
        _REPORT.reset(token)


@dataclass(frozen=True)
class _Rules:
    folder: str  # the patterns are matched against paths relative to this folder
    patterns: tuple  # pathspec patterns, in the file's order


class Ignored:
    """The ignore rules met on a walk from `top` down: `rules_for(folder)` once per folder, in
    walking order (parents first), then `ignores(folder, name, is_folder)`."""

    def __init__(self, top: str):
        self.active = _RESPECT.get()
        self._rules: dict[str, tuple[_Rules, ...]] = {}
        self._folder: str | None = None  # the folder last asked about, and its rules, deepest first,
        self._folder_rules: list[tuple[_Rules, str]] = []  # each with the folder's path relative to theirs
        if self.active:
            self._rules[os.path.normpath(top)] = self._above(top)

    def rules_for(self, folder: str) -> tuple[_Rules, ...]:
        folder = os.path.normpath(folder)
        if folder not in self._rules:
            parent = self._rules.get(os.path.dirname(folder) or ".", ())
            self._rules[folder] = parent + _read(os.path.join(folder, ".gitignore"), folder)
        return self._rules[folder]

    def ignores(self, folder: str, name: str, is_folder: bool) -> bool:
        if not self.active:
            return False
        if folder != self._folder:  # a walk asks of a folder's entries one after another
            self._folder, self._folder_rules = folder, [(rules, _relative_folder(folder, rules.folder))
                                                        for rules in reversed(self.rules_for(folder))]
        entry = name + ("/" if is_folder else "")
        for rules, prefix in self._folder_rules:  # the deepest file decides first
            relative = prefix + entry
            for pattern in reversed(rules.patterns):  # the last matching pattern wins
                if pattern.include is not None and pattern.match_file(relative):
                    return pattern.include
        return False

    def _above(self, top: str) -> tuple[_Rules, ...]:
        """The rules of the folders from the repository root down to `top`, `top`'s own included."""
        top = os.path.abspath(top)
        chain = [top]
        while not os.path.exists(os.path.join(chain[-1], ".git")):
            parent = os.path.dirname(chain[-1])
            if parent == chain[-1]:  # no repository: only `top`'s own rules
                chain = [top]
                break
            chain.append(parent)
        root = chain[-1]
        found = _read(os.path.join(root, ".git", "info", "exclude"), root) if os.path.isdir(os.path.join(root, ".git")) else ()
        for folder in reversed(chain):
            found += _read(os.path.join(folder, ".gitignore"), folder)
        return found


def _relative_folder(folder: str, base: str) -> str:
    """`folder` relative to `base` (a folder at or above it), "/"-separated, with a closing "/"
    ("" for `base` itself): a name in `folder` appended is its path as `base`'s patterns see it."""
    relative = os.path.relpath(os.path.normpath(folder), base).replace(os.sep, "/")
    return "" if relative == "." else relative + "/"


def _read(file: str, folder: str) -> tuple[_Rules, ...]:
    if not os.path.isfile(file):
        return ()
    from pathspec import GitIgnoreSpec  # here: a walk that meets no .gitignore does not import it

    try:
        with open(file, encoding="utf-8", errors="surrogateescape") as stream:
            lines = stream.read().splitlines()
    except OSError as exc:
        _tell(f"{file}: cannot be read ({exc.strerror}): its patterns are not applied (--no-ignore walks everything)")
        return ()
    patterns = tuple(GitIgnoreSpec.from_lines(lines).patterns)
    return (_Rules(os.path.normpath(folder), patterns),) if patterns else ()


def _tell(message: str) -> None:
    report = _REPORT.get()
    if report is not None:
        report(message)
    else:
        warnings.warn(message, stacklevel=3)
