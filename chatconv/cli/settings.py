"""Which checks a run reports: --select / --ignore CODE on the command line, and the
`[tool.chatconv]` table of the nearest pyproject.toml, as ruff reads its own.

The semantics are ruff's: `select` keeps only the problems of those codes, `ignore` drops those
codes (ignore wins over select); an ignored problem is not printed and does not fail the run,
and the summary says how many were ignored. A flag given on the command line replaces the
setting of the same name in the file. Unreadable input is never ignored: a file that could not
be read was not checked, so it is always reported and the run exits 2.
"""

from __future__ import annotations

import difflib
import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import click

from ..problems import CODES, Problem

EXIT_USAGE = 2
SETTINGS = {"select": "codes to report, the others ignored",
            "ignore": "codes not to report",
            "max-warnings": "as --max-warnings: at most N warning lines of each code"}


class SettingsError(click.ClickException):
    """A pyproject.toml whose [tool.chatconv] cannot be used: a usage error (exit status 2)."""

    exit_code = EXIT_USAGE

    def format_message(self) -> str:
        return self.message


@dataclass(frozen=True)
class Selection:
    """The codes a run reports; `None` selects every code."""

    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()

    def keeps(self, problem: Problem) -> bool:
        code = problem.code
        if code == "unreadable-file" or code is None:  # never hidden: see the module's docstring
            return True
        return code not in self.ignore and (self.select is None or code in self.select)

    @property
    def filters(self) -> bool:
        return self.select is not None or bool(self.ignore)


@dataclass(frozen=True)
class Settings:
    """The [tool.chatconv] table read (all defaults: no such table)."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    max_warnings: int | None = None


def unknown_code_text(code: str) -> str:
    """`unknown code 'mising-key' (did you mean 'missing-key'?)`, or the list of the codes."""
    close = difflib.get_close_matches(code, CODES, n=3, cutoff=0.6)
    if close:
        return f"unknown code {code!r} (did you mean {' or '.join(map(repr, close))}?)"
    return f"unknown code {code!r}; the codes are: {', '.join(CODES)}"


def split_codes(values) -> tuple[str, ...]:
    """`("a,b", "c")` -> `("a", "b", "c")`: repeated flags and comma-separated lists, as ruff takes them."""
    return tuple(code.strip() for value in values for code in value.split(",") if code.strip())


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml, from `start` up, that holds a [tool.chatconv] table."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        try:
            present = candidate.is_file()
        except OSError:  # a folder on the way up that cannot be searched: as if there were none
            present = False
        if present and _chatconv_table(candidate) is not None:
            return candidate
    return None


def _chatconv_table(path: Path):
    """The value of `tool.chatconv` in the TOML file `path`, None when there is none (a `tool`
    that is not a table holds none)."""
    tool = _read_toml(path).get("tool")
    return tool.get("chatconv") if isinstance(tool, dict) else None


def _read_toml(path: Path) -> dict:
    try:
        with path.open("rb") as stream:
            return tomllib.load(stream)
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line 3, column 7)"
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8
        line = exc.object[:exc.start].count(b"\n") + 1
        raise SettingsError(f"{path}: not valid TOML: a byte that is not UTF-8 (at line {line})") from None
    except OSError as exc:
        raise SettingsError(f"{path}: cannot be read: {exc.strerror or exc}") from None


def _setting_line(path: Path, key: str) -> str:
    """`:LINE` of `key = ...` in the [tool.chatconv] table, else "" (tomllib gives no positions
    of values; a table written another way, inline say, is named without a line)."""
    assignment = re.compile(rf"""^\s*["']?{re.escape(key)}["']?\s*=""")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    start = next((i for i, line in enumerate(lines) if line.strip() == "[tool.chatconv]"), 0)
    for number, line in enumerate(lines[start:], start + 1):
        if assignment.match(line):
            return f":{number}"
    return ""


def read_settings(path: Path) -> Settings:
    """The [tool.chatconv] table of `path`, checked: every key known, every code one of CODES."""
    table = _chatconv_table(path)

    def bad(key: str, what: str) -> SettingsError:
        return SettingsError(f"{path}{_setting_line(path, key)}: [tool.chatconv] {what}")

    if not isinstance(table, dict):
        raise bad("chatconv", "must be a table")
    for key in table:
        if key not in SETTINGS:
            close = difflib.get_close_matches(key, SETTINGS, n=1)
            known = f"did you mean {close[0]!r}?" if close else "the keys are: " + ", ".join(SETTINGS)
            raise bad(key, f"unknown key {key!r} ({known})")
    codes = {}
    for key in ("select", "ignore"):
        value = table.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
            raise bad(key, f'{key} must be a list of codes, e.g. {key} = ["legacy-shape"]')
        if key == "select" and not value:
            raise bad(key, "select lists no code: leave it out to report every code")
        for code in value:
            if code not in CODES:
                raise bad(key, f"{key}: {unknown_code_text(code)}")
        codes[key] = tuple(value)
    max_warnings = table.get("max-warnings")
    if max_warnings is not None and (type(max_warnings) is not int or max_warnings < 0):
        raise bad("max-warnings", "max-warnings must be a whole number, 0 or more")
    return Settings(codes.get("select"), codes.get("ignore", ()), max_warnings)


@functools.cache
def _settings_from(folder: Path) -> Settings:
    path = find_pyproject(folder)
    return Settings() if path is None else read_settings(path)


def current_settings() -> Settings:
    """The settings of the pyproject.toml nearest the current folder (read once per run)."""
    try:
        folder = Path.cwd().resolve()
    except OSError:  # the current folder was removed: there is nothing to read settings from
        return Settings()
    return _settings_from(folder)


def selected(problems: list[Problem], selection: Selection) -> tuple[list[Problem], int]:
    """The problems `selection` keeps, and how many it left out."""
    kept = [problem for problem in problems if selection.keeps(problem)]
    return kept, len(problems) - len(kept)


def ignored_text(count: int) -> str:
    """What a summary says of the problems --select / --ignore left out."""
    return f"{count:,} ignored: select / ignore"


def _codes_option(ctx, param, values) -> tuple[str, ...] | None:
    if not values:
        return None  # not given: the pyproject.toml's setting holds
    codes = split_codes(values)
    for code in codes:
        if code not in CODES:
            raise click.BadParameter(unknown_code_text(code), ctx, param)
    if not codes and param.name == "select":  # as `select = []` in the file
        raise click.BadParameter("lists no code: leave it out to report every code", ctx, param)
    return codes  # given, it replaces the setting: --ignore "" ignores nothing


def selection_options(command):
    """--select and --ignore of a command that reports problems: the command gets `selection`,
    made from the flags and, where a flag is not given, the [tool.chatconv] table."""

    @functools.wraps(command)
    def run(*args, select=None, ignore=None, **kwargs):
        settings = current_settings()
        select = select if select is not None else settings.select
        ignore = ignore if ignore is not None else settings.ignore
        selection = Selection(None if select is None else frozenset(select), frozenset(ignore or ()))
        return command(*args, selection=selection, **kwargs)

    run = click.option(
        "--ignore", multiple=True, metavar="CODE[,CODE]", callback=_codes_option,
        help="Do not report problems of these codes (repeat the flag or separate codes by commas): "
             "they are not printed, do not fail the run, and the summary counts them as ignored. "
             "Replaces `ignore` of [tool.chatconv] in pyproject.toml. The codes are in the README "
             "(\"Check codes\").")(run)
    return click.option(
        "--select", multiple=True, metavar="CODE[,CODE]", callback=_codes_option,
        help="Report only problems of these codes (e.g. --select missing-key,wrong-type); the others "
             "are ignored. --ignore wins over it. Replaces `select` of [tool.chatconv]. Unreadable "
             "input is always reported.")(run)
