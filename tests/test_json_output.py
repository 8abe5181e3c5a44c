"""`validate --format json`: one JSON object whose problems are written as they come (memory
stays flat however many there are), the counts after them; a run stopped mid-way leaves an
object that still parses, without the counts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter

import orjson
import pytest
from click.testing import CliRunner

from chatconv.cli import cli
from chatconv.cli import validate as validate_command
from chatconv.cli.max_warnings import WarningCap
from chatconv.cli.reporters import CHUNK, SKIPPED_REASON, JsonReporter
from chatconv.problems import Problem, UsageError
from chatconv.validate import Rendering, Summary, Validator
from chatconv.validate.rendered import BlockWriter, from_wire
from conftest import RECORDED
from test_migrate import legacy_bytes

UNKNOWN = b'{"output": 5}\n'  # a record of no kind: an error on every line


def _problem(line: int, code: str = "bad-value", severity: str = "error") -> Problem:
    return Problem("f.jsonl", line, 1, "$", f"#{line}", severity, code=code)


def test_problems_are_written_as_they_come_and_the_whole_is_one_object(capsysbinary):
    reporter = JsonReporter()
    problems = [_problem(line) for line in range(1, 2001)]
    items = b'{"problems":[' + b",".join(orjson.dumps(p.to_dict()) for p in problems)
    assert len(items) > 3 * CHUNK
    for problem in problems:
        reporter.problem(problem)
        assert len(reporter.pending) < CHUNK + 200  # what it holds: less than a chunk, however many came
    before_summary = capsysbinary.readouterr().out
    assert items.startswith(before_summary) and len(before_summary) > len(items) - CHUNK
    reporter.summary(Summary(files=1, records=2000, errors=2000, skipped_files=["notes.json"],
                             by_code=Counter({("bad-value", "error"): 2000})))
    written = before_summary + capsysbinary.readouterr().out
    assert written.endswith(b"}\n") and written.count(b"\n") == 1
    document = json.loads(written)
    assert list(document)[0] == "problems"  # first: the counts are known at the end only
    assert document == {"problems": [p.to_dict() for p in problems], "files": 1, "records": 2000, "errors": 2000,
                        "warnings": 0, "counts": [{"code": "bad-value", "severity": "error", "count": 2000,
                                                   "not_printed": 0}],
                        "not_printed": 0, "ignored": 0, "skipped": [{"file": "notes.json", "reason": SKIPPED_REASON}]}


def test_no_problem_is_an_empty_array(capsysbinary):
    JsonReporter().summary(Summary(files=1, records=2))
    assert json.loads(capsysbinary.readouterr().out) == {"problems": [], "files": 1, "records": 2, "errors": 0, "warnings": 0,
                                             "counts": [], "not_printed": 0, "ignored": 0, "skipped": []}


def test_blocks_and_problems_stream_alike_under_max_warnings(capsysbinary):
    reporter = JsonReporter()
    reporter.cap = WarningCap(1)
    writer = BlockWriter("f.jsonl", Rendering("json"))
    in_block = [_problem(1, "legacy-shape", "warning"), _problem(2, "legacy-shape", "warning"), _problem(3)]
    assert writer.take(tuple(in_block)) == ()
    block, _ = from_wire("f.jsonl", writer.wire())
    reporter.block(block)
    reporter.problem(_problem(4, "legacy-shape", "warning"))  # held back: the cap's one is printed
    reporter.problem(_problem(5))
    summary = Summary(files=1, records=5, errors=2, warnings=3,
                      by_code=Counter({("legacy-shape", "warning"): 3, ("bad-value", "error"): 2}))
    reporter.summary(summary)
    document = json.loads(capsysbinary.readouterr().out)
    assert document["problems"] == [_problem(1, "legacy-shape", "warning").to_dict(), _problem(3).to_dict(),
                                    _problem(5).to_dict()]
    assert document["not_printed"] == 2
    assert {"code": "legacy-shape", "severity": "warning", "count": 3, "not_printed": 2} in document["counts"]


def _json(*args) -> dict:
    result = CliRunner().invoke(cli, ["validate", "--format", "json", *map(str, args)])
    assert result.exit_code == 1 and result.stdout_bytes.count(b"\n") == 1, result.output
    return json.loads(result.stdout_bytes)


@pytest.fixture
def blocks(monkeypatch) -> list:
    """Batches of 8 KB, whose problems workers write (with --jobs 2): the blocks the reporter is given."""
    given = []
    real = JsonReporter.block
    monkeypatch.setattr(validate_command, "Validator", lambda **options: Validator(**options, batch_bytes=8192))
    monkeypatch.setattr(JsonReporter, "block", lambda self, block: given.append(block) or real(self, block))
    return given


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_many_problems_make_one_valid_document(tmp_path, blocks, jobs):
    path = tmp_path / "many.jsonl"
    path.write_bytes(UNKNOWN * 3000)
    document = _json(path, "--jobs", jobs)
    assert bool(blocks) == (jobs == "2")
    assert [problem["line"] for problem in document["problems"]] == list(range(1, 3001))
    assert (document["records"], document["errors"], document["counts"][0]["count"]) == (3000, 3000, 3000)


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    """Recorded runs as older writers wrote them, and the JSON output of their check: a
    legacy-shape warning on most lines, other warnings and errors among them."""
    lines = [legacy_bytes(line.rstrip(b"\n") + b"\n") for path in sorted(RECORDED.glob("*.jsonl"))
             for line in path.read_bytes().splitlines(keepends=True)]
    path = tmp_path_factory.mktemp("json") / "legacy.jsonl"
    path.write_bytes(b"".join(lines * 4))
    return path, _json(path)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_max_warnings_keeps_the_document_whole_and_the_counts(legacy, blocks, jobs):
    path, whole = legacy
    capped = _json(path, "--max-warnings", "2", "--jobs", jobs)
    assert bool(blocks) == (jobs == "2")
    warned = Counter(problem["code"] for problem in whole["problems"] if problem["severity"] == "warning")
    assert len(warned) > 1 and min(warned.values()) > 2 and whole["errors"]
    kept, shown = Counter(), []  # every error, the first two warnings of each code
    for problem in whole["problems"]:
        if problem["severity"] == "error" or kept[problem["code"]] < 2:
            kept[problem["code"]] += problem["severity"] == "warning"
            shown.append(problem)
    assert capped["problems"] == shown
    assert capped["not_printed"] == whole["warnings"] - sum(kept.values()) > 0
    assert {key: capped[key] for key in ("files", "records", "errors", "warnings", "ignored", "skipped")} == \
           {key: whole[key] for key in ("files", "records", "errors", "warnings", "ignored", "skipped")}


def _stopping_run(monkeypatch, raised: BaseException | None, after: int):
    """validate --format json whose run yields `after` problems, then raises `raised` (None: ends)."""

    def run(self, paths):
        for line in range(1, after + 1):
            self.summary.count(_problem(line))
            yield _problem(line)
        if raised is not None:
            raise raised

    monkeypatch.setattr(Validator, "run", run)
    return CliRunner().invoke(cli, ["validate", "--format", "json", "f.jsonl"])


@pytest.mark.parametrize("raised", [KeyboardInterrupt(), UsageError("the scheduler is out of reach")],
                         ids=["interrupt", "usage-error"])
def test_a_run_stopped_after_problems_leaves_an_object_that_parses_without_the_counts(monkeypatch, raised):
    result = _stopping_run(monkeypatch, raised, after=2)
    assert result.exit_code != 0
    assert json.loads(result.stdout_bytes) == {"problems": [_problem(1).to_dict(), _problem(2).to_dict()]}


def test_an_interrupt_while_the_counts_are_made_leaves_an_object_that_parses(monkeypatch):
    from chatconv.cli import reporters

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(reporters, "count_objects", interrupted)  # inside summary(), before its write
    result = _stopping_run(monkeypatch, None, after=2)
    assert result.exit_code != 0
    assert json.loads(result.stdout_bytes) == {"problems": [_problem(1).to_dict(), _problem(2).to_dict()]}


def test_a_run_stopped_before_any_problem_writes_nothing(monkeypatch):
    assert _stopping_run(monkeypatch, KeyboardInterrupt(), after=0).stdout_bytes == b""


@pytest.fixture
def slow(tmp_path):
    """A file whose problems come at once, then one that takes seconds to check."""
    (tmp_path / "a.jsonl").write_bytes(UNKNOWN * 400)  # 170 KB of problems: chunks of them
    (tmp_path / "b.jsonl").write_bytes(UNKNOWN * 200_000)
    return [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]


@pytest.mark.parametrize("signum, status, said", [(signal.SIGINT, 130, b"interrupted"),
                                                  (signal.SIGTERM, 143, b"terminated")])
def test_a_signal_mid_run_ends_the_document_it_began(slow, signum, status, said):
    run = subprocess.Popen([sys.executable, "-m", "chatconv", "validate", *slow, "--format", "json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = os.read(run.stdout.fileno(), 1000)  # the first problems are out
        run.send_signal(signum)
        rest, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == status and said in stderr and b"Traceback" not in stderr
    document = json.loads(first + rest)
    assert list(document) == ["problems"] and document["problems"]
    lines = {}  # of each file, those found before the signal: its first lines
    for problem in document["problems"]:
        lines.setdefault(problem["file"], []).append(problem["line"])
    assert list(lines) == slow[:len(lines)]
    assert all(numbers == list(range(1, len(numbers) + 1)) for numbers in lines.values())


def test_a_reader_that_goes_away_mid_document_ends_the_run_quietly(tmp_path):
    path = tmp_path / "many.jsonl"
    path.write_bytes(UNKNOWN * 3000)  # 1 MB of problems: more than a pipe holds
    run = subprocess.Popen([sys.executable, "-m", "chatconv", "validate", str(path), "--format", "json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stdout.read(10)
    run.stdout.close()  # `| head -c 10`
    assert run.wait(timeout=60) in (0, -signal.SIGPIPE)
    assert run.stderr.read() == b""


def test_a_full_device_mid_document_is_said_once(tmp_path):
    path = tmp_path / "many.jsonl"
    path.write_bytes(UNKNOWN * 3000)
    with open("/dev/full", "wb") as stdout:
        result = subprocess.run([sys.executable, "-m", "chatconv", "validate", str(path), "--format", "json"],
                                stdout=stdout, stderr=subprocess.PIPE, timeout=60)
    assert result.returncode == 2
    assert result.stderr == b"chatconv: error: cannot write standard output: No space left on device\n"
