"""Which files a folder's walk skips as git would: those its `.gitignore` files ignore.

A folder's `.gitignore` applies to that folder and below, a deeper one winning over a higher
one, and within a file the last pattern that matches wins (`!keep.jsonl` takes a file back).
The `.gitignore` files of the folders above the one walked, up to the repository root (the
folder holding `.git`), apply too, as does the root's `.git/info/exclude`. A folder that is
ignored is not entered (git cannot take back a file inside it either).

Patterns mean what they meant when pathspec's regular expressions matched them (but `[!a]` no
longer matches a "/", as in git), read here so that matching never backtracks: a pattern is
tried on a path in time proportional to the path's length times the pattern's (`_Pattern`). A
line git skips as invalid (`!`, `a\\`) is skipped with a warning naming it. Only the first
`MAX_BYTES` of a `.gitignore` are read and its first `MAX_PATTERNS` patterns applied, and a
pattern longer than `MAX_PATTERN_LENGTH` is skipped, each with a warning. So reading a file
takes time linear in at most `MAX_BYTES`, and matching a path against its patterns time linear
in the path's length times those bytes.

`walking_everything()` turns the skipping off for what runs inside it (`--no-ignore`).
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable, Iterator

# Whether walks skip ignored files, and where what a .gitignore holds that is not applied (all of
# it, unreadable; a line; what is past a limit) is told of.
# A context variable rather than an argument: every command's walk goes through
# discovery.discover, deep in the library, and --no-ignore is one switch over all of them.
_RESPECT = ContextVar("chatconv_respect_gitignore", default=True)
_REPORT: ContextVar[Callable[[str], None] | None] = ContextVar("chatconv_ignore_report", default=None)

# Git reads a .gitignore whole, whatever its size; a file larger than this, with more patterns or
# with a longer one (no path is longer: Linux's PATH_MAX) is no real one, and a walk would spend
# its time and memory on it (a sparse 3 GB file was read whole; 100,000 patterns took 15 s; one
# line of 500,000 `*a` 18 s and 500 MiB).
MAX_BYTES = 1 << 20
MAX_PATTERNS = 10_000
MAX_PATTERN_LENGTH = 4096


@contextlib.contextmanager
def walking_everything(everything: bool = True, report: Callable[[str], None] | None = None) -> Iterator[None]:
    """Within it, folders are walked whole (`everything`), or skipping ignored files as by
    default; `report` is given each warning about an ignore file (one that cannot be read, a
    line skipped, a limit reached), else it is a Python warning."""
    respect, reporter = _RESPECT.set(not everything), _REPORT.set(report)
    try:
        yield
    finally:
        _RESPECT.reset(respect)
        _REPORT.reset(reporter)


@contextlib.contextmanager
def quietly() -> Iterator[None]:
    """Walks as around it, telling nothing of an ignore file's warnings: a walk done twice (a
    progress bar's measure first) tells of them once."""
    token = _REPORT.set(lambda message: None)
    try:
        yield
    finally:
        _REPORT.reset(token)


@dataclass(frozen=True)
class _Rules:
    folder: str  # the patterns are matched against paths relative to this folder
    patterns: tuple[_Pattern, ...]  # in the file's order


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
                if pattern.regex.match(relative):
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
    try:
        with open(file, "rb") as stream:
            data = stream.read(MAX_BYTES + 1)
    except OSError as exc:
        _tell(f"{file}: cannot be read ({exc.strerror}): its patterns are not applied (--no-ignore walks everything)")
        return ()
    if len(data) > MAX_BYTES:  # its lines up to the last whole one in the first MAX_BYTES
        data = data[:data.rfind(b"\n", 0, MAX_BYTES) + 1]
        mib = MAX_BYTES >> 20
        _tell(f"{file}: larger than {mib} MiB: the patterns after its first {mib} MiB are not applied")
    patterns, skipped, first_skipped = [], 0, ""
    for number, line in enumerate(data.decode("utf-8", "surrogateescape").splitlines(), 1):
        # a line skipped counts too: reading one can cost as much as reading a pattern
        if len(patterns) + skipped == MAX_PATTERNS and line.strip() and not line.startswith("#"):
            _tell(f"{file}: more than {MAX_PATTERNS:,} patterns: those from line {number} on are not applied")
            break
        try:
            pattern = _Pattern.read(line)
        except ValueError as exc:
            skipped, first_skipped = skipped + 1, first_skipped or f"{file}:{number}: {exc}"
            continue
        if pattern is not None:
            patterns.append(pattern)
    if skipped:  # once per file: a generated file may hold thousands
        more = skipped - 1
        _tell(first_skipped + (f" (and {more:,} more line{'s' * (more > 1)} skipped)" if more else ""))
    return (_Rules(os.path.normpath(folder), tuple(patterns)),) if patterns else ()


@dataclass(frozen=True)
class _Pattern:
    """One line of a .gitignore, read as pathspec's GitIgnoreSpecPattern reads it, as a regular
    expression that never backtracks far.

    Between its `**`s a pattern is runs of parts of a path, one "/"-free piece of the pattern
    each. Each run is an atomic group (never tried again once it fits) placed at the first part
    where it fits, and within a part each `*` but the last takes the shortest text after which
    the piece up to the next `*` fits, also in an atomic group. Placing leftmost loses no match:
    what a later place would leave, the next `**` or `*` can take as well. So a match costs at
    most about the path's length times the pattern's. Pathspec's expressions backtracked
    instead: `*a*a*a*a*b` against a name of 255 `a`s took 17 s, each `*a` more some 50 times
    longer.
    """

    include: bool  # True: ignores what it matches; False (`!`): takes it back
    regex: re.Pattern  # matched at the start of the path relative to the .gitignore's folder

    @classmethod
    def read(cls, line: str) -> _Pattern | None:
        """The pattern of a line; None for a blank line, a comment or one that matches nothing.
        Raises ValueError, saying why, for a line that cannot be read."""
        if not line.endswith("\\ "):  # an escaped closing space is kept
            line = line.rstrip()
        if not line or line.startswith("#") or line == "/":
            return None
        if len(line) > MAX_PATTERN_LENGTH:
            raise ValueError(f"a pattern longer than {MAX_PATTERN_LENGTH:,} characters: skipped")
        include = not line.startswith("!")
        parts = line[0 if include else 1:].split("/")
        folders_only = not parts[-1]
        if not parts[0]:  # `/name` is anchored at the .gitignore's folder
            del parts[0]
        elif len(parts) == 1 or (len(parts) == 2 and not parts[1]):  # `name` and `name/` match at any depth
            parts.insert(0, "**")
        if not parts:
            raise ValueError("a `!` with no pattern after it: skipped, as git skips it")
        if not parts[-1]:  # `name/` matches only a folder: something follows it in a path below
            parts[-1] = "**"
        parts = [part for at, part in enumerate(parts) if part != "**" or not at or parts[at - 1] != "**"]  # `**/**`
        if parts == ["**"] and folders_only:  # `**/`: every path with a "/" in it
            parts = ["**", "*", "**"]
        runs, after_stars = [], False
        for part in parts:  # in order: the first of a `[` not closed and a closing `\` decides
            if part == "**":
                after_stars = True
                continue
            regex = _regex(part)
            if regex is None:
                return None
            if after_stars or not runs:
                runs.append((after_stars, []))
                after_stars = False
            runs[-1][1].append(regex)
        regex = ""
        for skips, run in runs:  # each at its first fit, once (atomic); after a `**`, past as few parts as it takes
            regex += "(?>" + "/" * bool(regex) + "(?:.*?/)??" * skips + "/".join(run) + r"(?=/|\Z))"
        if after_stars and len(parts) > 1:  # a closing `**` (`build/`, `logs/**`): more must follow
            regex += "/"
        if "[" not in regex:  # no bracket expression: nothing can be wrong, all else is escaped
            return cls(include, re.compile(regex, re.DOTALL))
        try:
            with warnings.catch_warnings():  # `[[`: Python's "possible nested set" (it is a `[`)
                warnings.simplefilter("ignore", FutureWarning)
                return cls(include, re.compile(regex, re.DOTALL))
        except re.error as exc:
            raise ValueError(f"a bracket expression that cannot be read ({exc.msg}): skipped") from None


def _regex(glob: str) -> str | None:
    """The regular expression of one part of a path by one "/"-free piece of a pattern (`*.py`);
    None if it holds a `[` with no closing `]` (git and pathspec drop such a pattern). Raises
    ValueError for a closing lone backslash."""
    if glob == "*":  # pathspec: not an empty part
        return "[^/]+"
    pieces, fixed, at = [], "", 0  # the texts between `*`s, as regular expressions of one character each
    while at < len(glob):
        char, at = glob[at], at + 1
        if char == "\\":
            if at == len(glob):
                raise ValueError("a pattern ending in a lone backslash: skipped, as git skips it")
            fixed, at = fixed + re.escape(glob[at]), at + 1
        elif char == "*":
            pieces.append(fixed)
            fixed = ""
        elif char == "?":
            fixed += "[^/]"
        elif char == "[":  # as pathspec reads it: `[!...]` or `[^...]` negates, a first `]` is in it
            negated = glob[at:at + 1] in ("!", "^")
            close = glob.find("]", at + negated + (glob[at + negated:at + negated + 1] == "]"))
            if close < 0:
                return None
            # (?!/): pathspec's `[!a]` matched a "/" too, git's never does
            fixed += "(?!/)[" + "^" * negated + glob[at + negated:close + 1].replace("\\", "\\\\")
            at = close + 1
        else:
            fixed += re.escape(char)
    if not pieces:
        return fixed
    # the first piece in place, each middle one at its first fit (atomic), the last at the end
    return pieces[0] + "".join(f"(?>[^/]*?{piece})" for piece in pieces[1:] if piece) + "[^/]*" + fixed


def _tell(message: str) -> None:
    report = _REPORT.get()
    if report is not None:
        report(message)
    else:
        warnings.warn(message, stacklevel=3)
