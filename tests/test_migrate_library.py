"""Migrating files and folders from the library, as `chatconv migrate` does but printing
nothing: plan_targets, refuse_rejects_among and migrate_paths."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import orjson
import pytest

from chatconv.migrate import (LineRejected, MigratedFile, migrate_document, migrate_lines, migrate_paths,
                              plan_targets, refuse_rejects_among)
from chatconv.problems import UnreadableInput, UsageError
from conftest import RECORDED, recorded_files
from test_migrate import EVAL_AFTER, EVAL_BEFORE, STEP, STEP_MIGRATED, legacy_bytes

WEATHER = RECORDED / "weather-steps.jsonl"


@pytest.fixture
def legacy_folder(tmp_path) -> Path:
    """Legacy copies of every recording and a legacy eval file, some in a subfolder."""
    folder = tmp_path / "legacy"
    (folder / "evals").mkdir(parents=True)
    for path in recorded_files():
        (folder / path.name).write_bytes(legacy_bytes(path.read_bytes()))
    (folder / "evals" / "review.yaml").write_text(EVAL_BEFORE)
    return folder


def _expected(folder: Path) -> dict[str, bytes]:
    """What each file of the legacy folder must become, by its name within the folder."""
    expected = {path.name: path.read_bytes() for path in recorded_files()}
    expected[str(Path("evals", "review.yaml"))] = EVAL_AFTER.encode()
    return expected


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


# ---------------------------------------------------------------------------------------------
# migrate_paths


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_folder_migrates_into_an_output_folder(legacy_folder, tmp_path, jobs):
    out = tmp_path / "out"
    # The eval file within its own era (its spellings); test_eras_migrate.py moves eval files on.
    outcomes = list(migrate_paths([str(legacy_folder)], str(out), jobs=jobs, to_era="evalcases"))
    assert _files(out) == _expected(legacy_folder)
    assert all(isinstance(o, MigratedFile) and o.error is None and not o.stopped for o in outcomes)
    assert sorted(Path(o.file).relative_to(legacy_folder).as_posix() for o in outcomes) == sorted(
        Path(name).as_posix() for name in _expected(legacy_folder))
    assert sum(o.tally.read for o in outcomes) == sum(o.tally.migrated + o.tally.unchanged for o in outcomes)
    assert all(o.tally.migrated for o in outcomes)


def test_a_folder_migrates_in_place_with_backups(legacy_folder):
    before = _files(legacy_folder)
    outcomes = list(migrate_paths([str(legacy_folder)], in_place=True, backup=True, to_era="evalcases"))
    after = _files(legacy_folder)
    assert {name: data for name, data in after.items() if not name.endswith(".bak")} == _expected(legacy_folder)
    assert {name[:-4]: data for name, data in after.items() if name.endswith(".bak")} == before
    assert len(outcomes) == len(before) and all(o.tally and o.tally.migrated for o in outcomes)


@pytest.mark.parametrize("mode", ["dry_run", "check"])
def test_a_dry_run_or_a_check_writes_nothing_and_counts_what_would_change(legacy_folder, tmp_path, mode):
    rejects = tmp_path / "rejects.jsonl"
    before = _files(legacy_folder)
    outcomes = list(migrate_paths([str(legacy_folder)], rejects=str(rejects), **{mode: True}))
    assert _files(legacy_folder) == before and not rejects.exists()
    weather = next(o for o in outcomes if o.file.endswith(WEATHER.name))
    assert weather.tally.migrated == weather.tally.read == 10


def test_a_bad_record_stops_its_file_and_the_run_goes_on(tmp_path):
    for name, data in [("a.jsonl", STEP + b"\n"), ("b.jsonl", STEP + b"\n{oops\n"), ("c.jsonl", STEP + b"\n")]:
        (tmp_path / name).write_bytes(data)
    outcomes = list(migrate_paths([str(tmp_path)], in_place=True))
    assert [(Path(o.file).name, o.stopped) for o in outcomes] == [("a.jsonl", False), ("b.jsonl", True),
                                                                  ("c.jsonl", False)]
    stopped = outcomes[1]
    assert isinstance(stopped.error, LineRejected) and stopped.tally is None
    assert (stopped.error.reject.line, stopped.error.problems[0].code) == (2, "invalid-json")
    assert (tmp_path / "a.jsonl").read_bytes() == STEP_MIGRATED + b"\n"
    assert (tmp_path / "b.jsonl").read_bytes() == STEP + b"\n{oops\n"  # left whole
    assert (tmp_path / "c.jsonl").read_bytes() == STEP_MIGRATED + b"\n"  # the run went on


def test_with_a_rejects_file_the_run_goes_on(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_bytes(b"{oops\n" + STEP + b"\n")
    (tmp_path / "in" / "b.jsonl").write_bytes(STEP + b"\n")
    rejects = tmp_path / "rejects.jsonl"
    outcomes = list(migrate_paths([str(tmp_path / "in")], in_place=True, rejects=str(rejects)))
    assert [(o.tally.migrated, o.tally.rejected) for o in outcomes] == [(1, 1), (1, 0)]
    assert (tmp_path / "in" / "a.jsonl").read_bytes() == STEP_MIGRATED + b"\n"
    assert orjson.loads(rejects.read_bytes())["text"] == "{oops"


def test_an_unreadable_file_is_reported_and_the_run_goes_on(tmp_path):
    (tmp_path / "a.jsonl").write_bytes("{}\n".encode("utf-16"))
    (tmp_path / "b.jsonl").write_bytes(STEP + b"\n")
    outcomes = list(migrate_paths([str(tmp_path)], in_place=True))
    assert isinstance(outcomes[0].error, UnreadableInput) and not outcomes[0].stopped
    assert "UTF-16" in outcomes[0].error.problems[0].message
    assert outcomes[1].tally.migrated == 1 and (tmp_path / "b.jsonl").read_bytes() == STEP_MIGRATED + b"\n"


def test_output_that_cannot_be_written_at_the_end_is_the_last_outcome(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(STEP + b"\n")
    migrated, closing = migrate_paths([str(tmp_path / "a.jsonl")], "/dev/full")
    assert migrated.tally.migrated == 1  # the bytes wait in the stream's buffer until it is closed
    assert closing.file == "/dev/full" and closing.tally is None and isinstance(closing.error, UnreadableInput)
    problem = closing.error.problems[0]
    assert (problem.message, problem.code) == ("cannot write the migrated records: No space left on device",
                                               "unreadable-file")


def test_a_rejects_file_that_cannot_be_written_stops_its_file(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(STEP + b"\n{oops\n")
    outcome = next(migrate_paths([str(tmp_path / "a.jsonl")], in_place=True, rejects="/dev/full"))
    problem = outcome.error.problems[0]
    assert problem.message.startswith("cannot write the rejected lines here") and problem.code == "unreadable-file"
    assert (tmp_path / "a.jsonl").read_bytes() == STEP + b"\n{oops\n"


def test_progress_is_asked_for_each_file_and_told_the_bytes_read(legacy_folder):
    seen: dict[str, list[int]] = {}

    @contextlib.contextmanager
    def progress(file):
        seen[file] = []
        yield seen[file].append

    outcomes = list(migrate_paths([str(legacy_folder)], dry_run=True, progress=progress))
    assert list(seen) == [o.file for o in outcomes]
    assert all(done[-1] == Path(file).stat().st_size for file, done in seen.items())


def test_leaving_the_run_early_migrates_no_further_file(legacy_folder, tmp_path):
    out = tmp_path / "out"
    run = migrate_paths([str(legacy_folder)], str(out), jobs=2)
    first = next(run)
    run.close()
    assert [Path(name).name for name in _files(out)] == [Path(first.file).name]


# ---------------------------------------------------------------------------------------------
# Refusals: UsageError with the message the command shows


@pytest.mark.parametrize("kwargs, message", [
    ({"output": "out", "in_place": True}, "use -o OUT or --in-place, not both"),
    ({"backup": True}, "--backup keeps FILE.bak of a file rewritten with --in-place"),
])
def test_options_that_exclude_each_other_are_refused(legacy_folder, kwargs, message):
    with pytest.raises(UsageError) as caught:
        list(migrate_paths([str(legacy_folder)], **kwargs))
    assert caught.value.message == message and caught.value.problems[0].code == "usage"


def test_planning_refuses_what_cannot_be_done(legacy_folder, tmp_path):
    def refused(*args, **kwargs) -> str:
        with pytest.raises(UsageError) as caught:
            plan_targets(*args, **kwargs)
        return caught.value.message

    folder = str(legacy_folder)
    assert refused(["-"], in_place=True) == "standard input cannot be rewritten in place; use -o OUT"
    assert refused([folder]) == "several input files: pass -o FOLDER or --in-place (or --dry-run, --check)"
    assert refused(["/dev/null"], in_place=True) == "--in-place rewrites regular files; /dev/null is not one"
    first = str(recorded_files()[0])
    assert refused([first, first], str(tmp_path / "out")) == (
        "-o FOLDER needs input files with distinct names (not standard input)")
    a_file = tmp_path / "a-file"
    a_file.write_bytes(b"")
    assert refused([folder], str(a_file)) == f"-o {a_file} is a file; several input files need -o FOLDER"
    (legacy_folder / "review.yaml").write_text(EVAL_BEFORE)  # -o FOLDER/evals would put it on evals/review.yaml
    inner = legacy_folder / "evals" / "review.yaml"
    assert refused([folder], str(legacy_folder / "evals")) == (
        f"-o {legacy_folder / 'evals'} would write over the input {inner} before it is read; "
        "write to a folder outside the inputs")
    assert refused([first], str(a_file / "x")) == f"-o {a_file / 'x'}: cannot make its folder: File exists"


def test_planning_says_where_each_file_goes(legacy_folder, tmp_path):
    first = str(recorded_files()[0])
    assert plan_targets([first]) == [(first, sys.stdout.buffer)]
    assert plan_targets([first], "-") == [(first, sys.stdout.buffer)]
    assert plan_targets([first], str(tmp_path / "new" / "one.jsonl")) == [(first, tmp_path / "new" / "one.jsonl")]
    assert all(target is None for _, target in plan_targets([str(legacy_folder), "-"], writes=False))
    (file, device), = plan_targets([first], "/dev/null")
    with device:
        assert file == first and device.name == "/dev/null" and device.writable()
    in_place = plan_targets([str(legacy_folder)], in_place=True)
    assert [target for _, target in in_place] == [Path(os.path.realpath(file)) for file, _ in in_place]
    assert {Path(file).relative_to(legacy_folder) for file, _ in in_place} == set(map(Path, _expected(legacy_folder)))
    into = plan_targets([str(legacy_folder)], str(tmp_path / "out"))
    assert (tmp_path / "out" / "evals").is_dir() and {t.relative_to(tmp_path / "out") for _, t in into} == {
        Path(name) for name in _expected(legacy_folder)}


def test_a_rejects_file_must_be_a_file_of_its_own(legacy_folder, tmp_path):
    targets = plan_targets([str(legacy_folder)], in_place=True)
    first = targets[0][0]
    for rejects, message in [
            ("-", "--rejects takes a file (the migrated records may be on standard output)"),
            (first, f"--rejects {first} is also an input or output file; give it a file of its own")]:
        with pytest.raises(UsageError) as caught:
            refuse_rejects_among(rejects, targets)
        assert caught.value.message == message
        with pytest.raises(UsageError) as caught:
            list(migrate_paths([str(legacy_folder)], in_place=True, rejects=rejects))
        assert caught.value.message == message
    refuse_rejects_among(str(tmp_path / "rejects.jsonl"), targets)  # a file of its own


def test_a_rejects_file_that_cannot_be_opened_is_refused_before_anything_is_written(legacy_folder, tmp_path):
    before = _files(legacy_folder)
    rejects = tmp_path / "missing" / "rejects.jsonl"
    with pytest.raises(UsageError) as caught:
        list(migrate_paths([str(legacy_folder)], in_place=True, rejects=str(rejects)))
    assert caught.value.message == f"cannot write the rejects file {rejects}: No such file or directory"
    assert _files(legacy_folder) == before


# ---------------------------------------------------------------------------------------------
# Codes: a rejected record names the check that refused it


@pytest.mark.parametrize("line, code", [
    (b"{oops", "invalid-json"),
    (b'{"stepIndex":0,"input":{"role":"user","content":"hi"},"output":{"role":"assistant","content":1e400}}',
     "not-written"),
])
def test_a_rejected_line_names_its_check(line, code):
    with pytest.raises(LineRejected) as caught:
        migrate_lines(line + b"\n", "run.jsonl")
    assert caught.value.problems[0].code == caught.value.reject.code == code


def test_a_rejected_document_names_its_check():
    with pytest.raises(LineRejected) as caught:
        migrate_document(b"a: [\n", "bad.yaml", "yaml")
    assert caught.value.problems[0].code == "invalid-yaml"
    with pytest.raises(LineRejected) as caught:
        migrate_document(b'{"eval_cases": [], "eval_cases": []}', "bad.json", "json")
    assert caught.value.problems[0].code == "duplicate-key"
