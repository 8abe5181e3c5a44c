"""Output for a person: colour on a terminal only, the table's header and columns, the progress bar."""

from __future__ import annotations

import io
import re
import sys

import click
import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.cli import cli, colour, progress
from chatconv.cli.progress import ProgressBar
from chatconv.problems import Problem
from chatconv.recordings.rows import COLUMN_TITLES, COLUMN_WIDTHS, DATASET_COLUMNS, TEXT_COLUMNS, _cut
from chatconv.recordings.tool_events import TOOL_COLUMNS
from conftest import RECORDED

BAR = re.compile(r"\r[^\r\n]*?\x1b\[K")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
STEPS = RECORDED / "weather-steps.jsonl"
TEXT_LINE = re.compile(r"^[^\n]+:\d+:\d+: (error|warning): \$[^\n]*$")


@pytest.fixture
def faulty(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(STEPS.read_bytes().splitlines()[0][:-1] + b', "colour": 1}\n{"stepIndex": "a"}\n')
    return path


def run(args, env=None, terminal=False, monkeypatch=None):
    if monkeypatch is not None:
        monkeypatch.setattr(colour, "is_terminal", lambda stream: terminal)
    return CliRunner().invoke(cli, list(map(str, args)), env=env or {}, color=True)


def test_not_a_terminal_is_plain_text_byte_for_byte(faulty, monkeypatch):
    plain = run(["validate", faulty], env={"NO_COLOR": None, "FORCE_COLOR": None}, monkeypatch=monkeypatch)
    assert "\x1b[" not in plain.output
    problems = plain.output.splitlines()[:4]
    assert all(TEXT_LINE.match(line) for line in problems), problems
    assert run(["validate", "--color", "never", faulty], terminal=True, monkeypatch=monkeypatch).output == plain.output


def test_a_terminal_gets_colour_unless_no_color(faulty, monkeypatch):
    plain = run(["validate", faulty], monkeypatch=monkeypatch).output
    coloured = run(["validate", faulty], env={"NO_COLOR": None}, terminal=True, monkeypatch=monkeypatch).output
    assert "\x1b[31m\x1b[1merror\x1b[0m" in coloured and "\x1b[33m\x1b[1mwarning\x1b[0m" in coloured
    assert coloured.startswith(f"\x1b[1m{faulty}:1:")  # the place bold
    assert ANSI.sub("", coloured) == plain  # colour is all that changes
    for no_color in ("1", "yes"):
        assert run(["validate", faulty], env={"NO_COLOR": no_color}, terminal=True,
                   monkeypatch=monkeypatch).output == plain
    # an empty NO_COLOR is as if unset (no-color.org)
    assert run(["validate", faulty], env={"NO_COLOR": ""}, terminal=True, monkeypatch=monkeypatch).output == coloured
    # asked for: colour even in a pipe; FORCE_COLOR too, NO_COLOR winning over it
    assert run(["validate", "--color", "always", faulty], monkeypatch=monkeypatch).output == coloured
    assert run(["validate", faulty], env={"FORCE_COLOR": "1"}, monkeypatch=monkeypatch).output == coloured
    assert run(["validate", faulty], env={"FORCE_COLOR": "1", "NO_COLOR": "1"},
               monkeypatch=monkeypatch).output == plain


@pytest.mark.parametrize("file", ["evals/a.yaml", "bad\udcff\u00e9.jsonl", "-"])
def test_colour_is_all_that_changes_whatever_the_file_name(file):
    # A name whose bytes are not UTF-8 is shown escaped (bad\\xff): its coloured line too.
    problem = Problem(file, 3, None, "$.a", "m", "warning", "h", "bad-value")
    coloured = colour.coloured_text(problem)
    assert ANSI.sub("", coloured) == problem.format_text()
    assert coloured.startswith(f"\x1b[1m{problem.where}\x1b[0m: \x1b[33m\x1b[1mwarning\x1b[0m: $.a: m")


def test_problems_on_standard_error_are_coloured_alike(faulty, monkeypatch):
    result = run(["text", "--color", "always", faulty], monkeypatch=monkeypatch)
    assert "\x1b[31m\x1b[1merror\x1b[0m" in result.stderr
    assert "\x1b[" not in result.stdout  # the data is never coloured


@pytest.mark.parametrize("command, columns", [("text", TEXT_COLUMNS), ("tools", TOOL_COLUMNS),
                                             ("dataset", DATASET_COLUMNS)])
def test_the_table_has_a_header_and_aligned_columns(command, columns):
    result = CliRunner().invoke(cli, [command, "--format", "table", str(STEPS)])
    assert result.exit_code == 0, result.output
    title, rule, *rows = result.output.splitlines()
    header = [COLUMN_TITLES.get(column, column) for column in columns]
    assert title.split() == header
    starts = [match.start() for match in re.finditer(r"-+", rule)]
    assert [title.index(name) for name in header] == starts  # each title over its column
    widths = [len(match.group()) for match in re.finditer(r"-+", rule)]
    jsonl = [orjson.loads(line) for line in CliRunner().invoke(cli, [command, str(STEPS)]).output.splitlines()]
    assert len(rows) == len(jsonl) > 0
    for row, record in zip(rows, jsonl):
        for start, width, column in zip(starts, widths, columns):
            assert start == 0 or row[start - 2:start] == "  "  # columns stay apart
            cell = row[start:start + width].rstrip()
            value = record[column] if isinstance(record[column], str) else orjson.dumps(record[column]).decode()
            value = " ".join(value.split())
            assert cell == value or (cell.endswith("…") and value.startswith(cell[:-1])), (cell, value)
    assert any("…" in row for row in rows) if command != "tools" else True  # the fixture's texts are long


def test_the_table_shows_control_characters_inert(tmp_path):
    # An escape sequence in a recorded output would colour (or clear) the terminal showing the table.
    path = tmp_path / "r.jsonl"
    path.write_bytes(orjson.dumps({"conversationId": "c\x07", "stepIndex": 0, "input": {"role": "user", "content": "hi"},
                                   "output": [{"role": "assistant", "content": "\x1b[31mred\x1b[0m \x9b2J"}]}) + b"\n")
    result = CliRunner().invoke(cli, ["text", "--format", "table", str(path)])
    assert result.exit_code == 0, result.output
    row = result.output.splitlines()[2]
    assert row == "c\ufffd".ljust(24) + "  0     \ufffd[31mred\ufffd[0m \ufffd2J"


@pytest.mark.parametrize("text, width, expected", [
    ("short", 10, ("short", 5)),
    ("exactly ten", 11, ("exactly ten", 11)),
    ("a longer value", 8, ("a longe…", 8)),
    ("日本語のテキスト", 7, ("日本語…", 7)),  # wide characters take two cells
    ("line\nbreak", 20, ("line\nbreak", 10)),
    ("é" * 100_000, 5, ("éééé…", 5)),
    ("x" * 100_000, 5, ("xxxx…", 5)),
    ("e\u0301" * 4, 4, ("e\u0301" * 4, 4)),  # a combining accent takes no cell
])
def test_cut_to_display_cells(text, width, expected):
    assert _cut(text, width) == expected


def test_table_widths_cover_every_column():
    assert set(TEXT_COLUMNS + DATASET_COLUMNS + TOOL_COLUMNS) <= set(COLUMN_WIDTHS)


# --- the progress bar ---------------------------------------------------------------------------

class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 0.5  # each look at the clock: half a second later
        return self.now


def test_the_bar_appears_only_after_its_delay_and_clears_itself():
    stream = io.StringIO()
    bar = ProgressBar(1000, stream, clock=FakeClock(), delay=2.0)
    bar.file("a.jsonl")  # no such file: its size is 0, the bytes are still counted
    bar.size = 1000
    bar.read(100)  # 1 s
    assert stream.getvalue() == ""  # a short run prints nothing
    bar.read(400)
    bar.read(0)
    drawn = stream.getvalue()
    assert " 50% [############------------] 500 B of 1.0 KB  a.jsonl" in drawn and drawn.startswith("\r")
    bar.clear()
    assert stream.getvalue().endswith("\r\x1b[K") and not bar.shown
    bar.read(10**6)
    assert bar.fraction == 1.0  # never past the whole


def _with_terminal(monkeypatch, terminal: bool):
    monkeypatch.setattr(progress, "is_terminal", lambda stream: terminal)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "REDRAW", 0.0)


@pytest.mark.parametrize("args", [["validate"], ["validate", "--format", "sarif"], ["text"], ["tools"], ["dataset"], ["import", "-o", "{out}"],
                                  ["export", "--to", "anthropic", "-o", "{out}"], ["migrate", "-o", "{out}"]])
def test_a_terminal_shows_the_bar_on_standard_error_only(tmp_path, monkeypatch, args):
    args = [arg.format(out=tmp_path / "out.jsonl") for arg in args] + [str(STEPS)]
    _with_terminal(monkeypatch, False)
    quiet = CliRunner().invoke(cli, args)
    assert "\r" not in quiet.stderr and "%" not in quiet.stderr  # not a terminal: no bar
    _with_terminal(monkeypatch, True)
    if args[0] in ("text", "tools", "dataset"):  # data on a terminal's screen: no bar over it
        assert "\r" not in CliRunner().invoke(cli, args).stderr
        monkeypatch.setattr(progress, "is_terminal", lambda stream: stream is not sys.stdout)
    shown = CliRunner().invoke(cli, args)
    assert "% [" in shown.stderr and "\r\x1b[K" in shown.stderr
    assert shown.stdout_bytes == quiet.stdout_bytes and shown.exit_code == quiet.exit_code
    # each drawing and clearing is a whole line's overwrite: without them, stderr is the quiet run's
    assert BAR.sub("", shown.stderr) == quiet.stderr
    assert shown.stderr.endswith("\r\x1b[K" + quiet.stderr)  # cleared before the summary


# ---------------------------------------------------------------------------------------------
# Control characters from the input never reach a terminal or a CI log raw

_RAW_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=300, deadline=None)
@given(file=_ANY_TEXT.filter(bool), path=_ANY_TEXT, message=_ANY_TEXT, hint=st.none() | _ANY_TEXT,
       line=st.none() | st.integers(1, 10**6))
def test_problem_lines_escape_every_control_character_and_json_keeps_the_name(file, path, message, hint, line):
    from chatconv.cli.reporters import github_annotation, short_line, skipped_line
    from chatconv.problems import printable, shown_name
    from chatconv.validate.rendered import _text_pieces

    problem = Problem(file, line, 1, path, message, "warning", hint, "invalid-json")
    text = problem.format_text()
    lines = [text, github_annotation(problem), short_line(file, message, line, hint), skipped_line(file),
             *(piece.decode().removesuffix("\n") for piece in _text_pieces(problem))]  # (the line's own end)
    assert not any(_RAW_CONTROL.search(written) for written in lines), lines
    assert text.startswith(problem.where + ": warning: ")  # the colour and the workers' blocks cut it there
    assert "\x1b" not in click.unstyle(colour.coloured_text(problem)) and click.unstyle(colour.coloured_text(problem)) == text
    assert problem.to_dict()["file"] == shown_name(file)  # JSON: the name itself (JSON escapes what it must)
    assert printable(printable(text)) == printable(text) == text  # once is enough


def test_file_names_holding_escape_sequences_are_shown_escaped(tmp_path):
    from conftest import run_chatconv

    red, titled = "a\x1b[31mred\a.jsonl", "b\x1b]0;title\a.jsonl"
    recording = (RECORDED / "demand-letter-steps.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / red).write_bytes(b"".join(recording[:2]))
    (tmp_path / titled).write_bytes(b"".join(recording[:2]) + b'{"conversationId": 5\n')
    commands = [("validate", "."), ("validate", ".", "--format", "github"), ("validate", ".", "--show-files"),
                ("import", "."), ("text", "."), ("tools", "."), ("export", ".", "--to", "openai-chat")]
    results = {command: run_chatconv(*command, cwd=tmp_path) for command in commands}
    for command, result in results.items():
        assert not re.search("[\x1b\a]", result.stdout_text + result.stderr_text), command
    assert "b\\x1b]0;title\\x07.jsonl:3:21: error: $: invalid JSON" in results["validate", "."].stdout_text
    # Values of a record, in a table for a person and in text, as well.
    hostile = {"conversationId": "c\x1b[31m", "stepIndex": 0, "input": {"role": "user", "content": "hi\x1b]0;t\a"},
               "output": [{"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "x\x1b[2J",
                                                              "toolName": "rm\x1b[31m", "input": {"a": "\x1b[5m"}}]},
                          {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "x\x1b[2J",
                                                         "toolName": "rm\x1b[31m",
                                                         "output": {"type": "text", "value": "ok\a"}}]}]}
    (tmp_path / "values.jsonl").write_bytes(orjson.dumps(hostile) + b"\n")
    for command in (("tools", "--format", "table"), ("dataset", "--format", "table"), ("text",), ("tools",)):
        result = run_chatconv(*command, "values.jsonl", cwd=tmp_path)
        assert result.returncode == 0 and not re.search("[\x1b\a]", result.stdout_text + result.stderr_text), command
    # Exact, as JSON writes a name (escaped by JSON's rules) and SARIF a URI (percent-encoded).
    for output, name in (("json", b"b\\u001b]0;title\\u0007.jsonl"), ("sarif", b"b%1B%5D0%3Btitle%07.jsonl")):
        written = run_chatconv("validate", ".", "--format", output, cwd=tmp_path).stdout
        assert name in written and b"\x1b" not in written
