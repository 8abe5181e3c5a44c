"""`chatconv migrate` as a user runs it: outputs, --check, --dry-run, rejects, exit codes."""

from __future__ import annotations

import orjson
import pytest

from conftest import RECORDED, recorded_files, run_chatconv
from test_migrate import EVAL_AFTER, EVAL_BEFORE, legacy_bytes

WEATHER = RECORDED / "weather-steps.jsonl"


@pytest.fixture
def legacy_folder(tmp_path):
    """Legacy copies of every recording, in a folder of their own."""
    folder = tmp_path / "legacy"
    folder.mkdir()
    for path in recorded_files():
        (folder / path.name).write_bytes(legacy_bytes(path.read_bytes()))
    return folder


def test_one_input_goes_to_stdout_with_a_summary_on_stderr(legacy_folder):
    result = run_chatconv("migrate", legacy_folder / WEATHER.name)
    assert result.returncode == 0, result.stderr_text
    assert result.stdout == WEATHER.read_bytes()
    assert result.stderr_text == ("1 file, 10 records read: 10 migrated, 0 unchanged, 0 rejected\n"
                                  "  0001_step_output_array: 5 records\n  0002_ai_sdk5_parts: 5 records\n")


def test_standard_input_to_standard_output():
    result = run_chatconv("migrate", "-", stdin=legacy_bytes(WEATHER.read_bytes()))
    assert result.returncode == 0 and result.stdout == WEATHER.read_bytes()


def test_a_folder_to_an_output_folder_with_two_jobs(legacy_folder, tmp_path):
    out = tmp_path / "out"
    result = run_chatconv("migrate", legacy_folder, "-o", out, "--jobs", "2")
    assert result.returncode == 0, result.stderr_text
    for path in recorded_files():
        assert (out / path.name).read_bytes() == path.read_bytes()
    assert "5 files, 45 records read: 45 migrated, 0 unchanged, 0 rejected" in result.stderr_text


def test_in_place_with_a_backup(legacy_folder):
    path = legacy_folder / WEATHER.name
    legacy = path.read_bytes()
    result = run_chatconv("migrate", path, "--in-place", "--backup")
    assert result.returncode == 0, result.stderr_text
    assert path.read_bytes() == WEATHER.read_bytes()
    assert (legacy_folder / (WEATHER.name + ".bak")).read_bytes() == legacy
    again = run_chatconv("migrate", path, "--in-place", "--backup")  # nothing to change: nothing touched
    assert again.returncode == 0 and "0 migrated, 10 unchanged" in again.stderr_text
    assert (legacy_folder / (WEATHER.name + ".bak")).read_bytes() == legacy


def test_check_exits_1_when_anything_would_change_and_writes_nothing(legacy_folder):
    before = {p: p.read_bytes() for p in legacy_folder.iterdir()}
    result = run_chatconv("migrate", "--check", legacy_folder, RECORDED)
    assert result.returncode == 1
    assert result.stdout == b""
    assert f"would migrate {legacy_folder / WEATHER.name} (10 of 10 records)" in result.stderr_text
    assert "10 files, 90 records read: 45 migrated, 45 unchanged, 0 rejected (nothing written)" in result.stderr_text
    assert {p: p.read_bytes() for p in legacy_folder.iterdir()} == before
    current = run_chatconv("migrate", "--check", RECORDED)
    assert current.returncode == 0, current.stderr_text
    assert "would migrate" not in current.stderr_text


def test_dry_run_says_what_would_change_per_migration_with_examples(legacy_folder):
    path = legacy_folder / WEATHER.name
    result = run_chatconv("migrate", "--dry-run", path)
    assert result.returncode == 0
    assert result.stdout_text == (
        f"would migrate {path}: 10 of 10 records\n"
        "0001_step_output_array: 5 records (step output is one message object; it becomes a one-message array)\n"
        f"  {path}:6: $.output\n  {path}:7: $.output\n  {path}:8: $.output\n"
        "0002_ai_sdk5_parts: 5 records (AI SDK 4 parts (args, result/isError, mimeType, experimental_providerMetadata, "
        "redacted-reasoning, reasoning signature, experimental_content))\n"
        f"  {path}:1: $.output[0].content[0]\n  {path}:2: $.output[0].content[0]\n  {path}:3: $.output[0].content[0]\n")
    assert path.read_bytes() == legacy_bytes(WEATHER.read_bytes())


def _with_a_bad_line(tmp_path):
    lines = legacy_bytes(WEATHER.read_bytes()).splitlines(keepends=True)
    lines[3] = lines[3][:40] + b"\n"  # a record cut short, as by a crash while recording
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(lines))
    return path, lines


def test_a_bad_line_stops_the_run_and_leaves_the_input_untouched(tmp_path):
    path, lines = _with_a_bad_line(tmp_path)
    result = run_chatconv("migrate", path, "--in-place")
    assert result.returncode == 1
    assert result.stderr_text.startswith(f"{path}:4: error: invalid JSON: ")
    assert "at column 41 (the record ends too early: the line or file may be truncated)" in result.stderr_text
    assert path.read_bytes() == b"".join(lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.jsonl"]  # no temporary file left
    check = run_chatconv("migrate", "--check", path)
    assert check.returncode == 1 and f"{path}:4: error: invalid JSON" in check.stderr_text


def test_with_rejects_a_bad_line_is_set_aside_and_every_line_accounted_for(tmp_path):
    path, lines = _with_a_bad_line(tmp_path)
    rejects = tmp_path / "rejects.jsonl"
    result = run_chatconv("migrate", path, "--in-place", "--rejects", rejects)
    assert result.returncode == 0, result.stderr_text
    assert "1 file, 10 records read: 9 migrated, 0 unchanged, 1 rejected" in result.stderr_text
    expected = WEATHER.read_bytes().splitlines(keepends=True)
    assert path.read_bytes() == b"".join(expected[:3] + expected[4:])  # 10 in = 9 out + 1 rejected
    [entry] = [orjson.loads(line) for line in rejects.read_bytes().splitlines()]
    assert entry == {"file": str(path), "line": 4, "error": entry["error"], "text": lines[3][:40].decode()}
    assert entry["error"].startswith("invalid JSON")


def test_dry_run_with_rejects_lists_them_and_writes_nothing(tmp_path):
    path, lines = _with_a_bad_line(tmp_path)
    rejects = tmp_path / "rejects.jsonl"
    result = run_chatconv("migrate", "--dry-run", path, "--rejects", rejects)
    assert result.returncode == 0
    assert "rejected: 1 record\n" in result.stdout_text and f"  {path}:4: invalid JSON" in result.stdout_text
    assert not rejects.exists() and path.read_bytes() == b"".join(lines)


def test_yaml_eval_file_in_place_keeps_comments_and_quoting(tmp_path):
    path = tmp_path / "review.yaml"
    path.write_text(EVAL_BEFORE)
    result = run_chatconv("migrate", path, "--in-place", "--to", "evalcases")
    assert result.returncode == 0, result.stderr_text
    assert path.read_text() == EVAL_AFTER
    assert "0003_eval_file_spellings: 1 record" in result.stderr_text
    assert run_chatconv("migrate", "--check", "--to", "evalcases", path).returncode == 0


@pytest.mark.parametrize("args, message", [
    (["a.jsonl", "b.jsonl"], "several input files"),
    (["a.jsonl", "-o", "x", "--in-place"], "not both"),
    (["a.jsonl", "--backup"], "--backup keeps FILE.bak"),
    (["-", "--in-place"], "standard input cannot be rewritten in place"),
    (["a.jsonl", "--jobs", "0"], "--jobs"),
])
def test_usage_errors_exit_2(tmp_path, args, message):
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(WEATHER.read_bytes())
    result = run_chatconv("migrate", *[tmp_path / a if a.endswith(".jsonl") else a for a in args])
    assert result.returncode == 2 and message in result.stderr_text


def test_unreadable_input_exits_2_and_other_files_still_migrate(tmp_path, legacy_folder):
    result = run_chatconv("migrate", tmp_path / "missing.jsonl", legacy_folder / WEATHER.name, "-o", tmp_path / "out")
    assert result.returncode == 2
    assert f"{tmp_path / 'missing.jsonl'}: error: no such file" in result.stderr_text
    assert (tmp_path / "out" / WEATHER.name).read_bytes() == WEATHER.read_bytes()


def test_two_jobs_give_the_same_bytes_line_numbers_and_rejects_as_one(tmp_path):
    legacy = legacy_bytes(WEATHER.read_bytes()).splitlines(keepends=True)
    lines = [legacy[i % len(legacy)] for i in range(4000)]  # ~3 MB: several batches of ~1 MiB
    for number in (2500, 3999):
        lines[number - 1] = b'{"stepIndex": oops}\n'
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(lines))
    stopped = run_chatconv("migrate", path, "--jobs", "2")
    assert stopped.returncode == 1 and stopped.stderr_text.startswith(f"{path}:2500: error: invalid JSON")
    outputs = {}
    for jobs in ("1", "2"):
        rejects = tmp_path / f"rejects-{jobs}.jsonl"
        result = run_chatconv("migrate", path, "-o", tmp_path / f"out-{jobs}.jsonl", "--jobs", jobs,
                              "--rejects", rejects)
        assert result.returncode == 0, result.stderr_text
        assert "4000 records read: 3998 migrated, 0 unchanged, 2 rejected" in result.stderr_text
        assert [orjson.loads(line)["line"] for line in rejects.read_bytes().splitlines()] == [2500, 3999]
        outputs[jobs] = (tmp_path / f"out-{jobs}.jsonl").read_bytes()
        dry = run_chatconv("migrate", "--dry-run", path, "--jobs", jobs, "--rejects", rejects)
        outputs[jobs, "dry"] = dry.stdout
    assert outputs["1"] == outputs["2"] and outputs["1", "dry"] == outputs["2", "dry"]
    assert b"big.jsonl:2500: invalid JSON" in outputs["2", "dry"]


def test_a_folder_migration_goes_on_past_a_refused_file_and_names_each(tmp_path):
    (tmp_path / ".git").mkdir()
    ok = "evalcases:\n  - id: a\n    outcome: o\n    input_messages: [{role: user, content: hi}]\n"
    refused = "metadata: {owner: me}\n" + ok  # a file-level metadata has no home in the tests era
    for name, text in [("a.yaml", ok), ("b.yaml", refused), ("c.yaml", refused), ("d.yaml", ok)]:
        (tmp_path / name).write_text(text)
    result = run_chatconv("migrate", tmp_path, "--to", "tests", "--in-place")
    assert result.returncode == 1
    errors = [line for line in result.stderr_text.splitlines() if ": error: " in line]
    assert [line.split(": error: ")[0] for line in errors] == [f"{tmp_path / 'b.yaml'}:1", f"{tmp_path / 'c.yaml'}:1"]
    assert all("$.metadata: a file-level metadata has no home in the tests era" in line for line in errors)
    assert "2 files, 2 records read: 2 migrated, 0 unchanged, 0 rejected; 2 files left as they were (refused)" \
        in result.stderr_text
    assert (tmp_path / "b.yaml").read_text() == refused and (tmp_path / "c.yaml").read_text() == refused
    assert (tmp_path / "d.yaml").read_text().startswith("tests:")  # past the refused files, migrated


def _tree(root):
    """A small eval tree: a file that migrates, one refused, a prompt file, a script, a hidden
    folder's file, a link out of the tree, and what git keeps (.git) and ignores."""
    ok = "evalcases:\n  - id: a\n    outcome: o\n    input_messages: [{role: user, content: hi}]\n"
    files = {"evals/a.yaml": ok, "evals/b.yaml": "metadata: {owner: me}\n" + ok, "evals/prompt.md": "Be terse.\n",
             "graders/check.sh": "#!/bin/sh\nexit 0\n", ".github/prompts/p.prompt.md": "Hi\n",
             ".gitignore": "results/\n", "results/run.txt": "old run\n", ".git/config": "[core]\n"}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "graders/check.sh").chmod(0o755)
    (root / "evals/outside.md").symlink_to("/etc/hostname")
    return files


def test_a_folder_into_a_folder_comes_out_whole(tmp_path):
    source, out = tmp_path / "src", tmp_path / "out"
    files = _tree(source)
    result = run_chatconv("migrate", source, "--to", "tests", "-o", out)
    assert result.returncode == 1  # b.yaml refused, and named
    assert f"{source / 'evals/b.yaml'}:1: error: $.metadata" in result.stderr_text
    got = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() or p.is_symlink())
    assert got == [".github/prompts/p.prompt.md", ".gitignore", "evals/a.yaml", "evals/b.yaml", "evals/prompt.md",
                   "graders/check.sh"]  # not .git, not what .gitignore ignores, not the link out of the tree
    assert (out / "evals/a.yaml").read_text().startswith("tests:")
    for name in got[1:]:
        if name != "evals/a.yaml":
            assert (out / name).read_text() == files[name], name
    assert (out / "graders/check.sh").stat().st_mode & 0o777 == 0o755
    assert "outside.md: warning: skipped: a symlink to a file outside" in result.stderr_text
    assert (f"copied unchanged into {out}: 1 file not migrated (named above) and 4 other files"
            in result.stderr_text)


@pytest.mark.parametrize("mode", [["--in-place"], ["--dry-run"], ["--check"]])
def test_only_a_folder_written_into_a_folder_gets_copies(tmp_path, mode):
    files = _tree(tmp_path)
    before = sorted(p for p in tmp_path.rglob("*"))
    result = run_chatconv("migrate", tmp_path, "--to", "tests", *mode)
    assert "copied unchanged" not in result.stderr_text
    assert sorted(p for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "evals/prompt.md").read_text() == files["evals/prompt.md"]


def test_an_output_folder_inside_the_input_folder_is_not_copied_into_itself(tmp_path):
    _tree(tmp_path)
    result = run_chatconv("migrate", tmp_path, "--to", "tests", "-o", tmp_path / "migrated")
    assert result.returncode == 1
    assert not (tmp_path / "migrated/migrated").exists()
    assert (tmp_path / "migrated/evals/prompt.md").read_text() == "Be terse.\n"
    run_chatconv("migrate", tmp_path / "evals", "--to", "tests", "-o", tmp_path / "evals/out")
    assert not (tmp_path / "evals/out/out").exists() and (tmp_path / "evals/out/prompt.md").exists()


def test_two_files_that_would_go_to_one_place_are_refused_before_anything_is_written(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.md").write_text(f"{name} readme\n")
    result = run_chatconv("migrate", tmp_path / "a", tmp_path / "b", "-o", tmp_path / "out")
    assert result.returncode == 2 and "would both go to" in result.stderr_text
    assert not (tmp_path / "out" / "README.md").exists()


def test_an_input_folder_inside_the_output_folder_is_copied_whole(tmp_path):
    files = _tree(tmp_path / "out" / "in")
    result = run_chatconv("migrate", tmp_path / "out" / "in", "--to", "tests", "-o", tmp_path / "out")
    assert result.returncode == 1
    assert (tmp_path / "out" / "evals/prompt.md").read_text() == files["evals/prompt.md"]


def test_a_copy_that_cannot_be_written_is_named_and_the_others_are_made(tmp_path):
    source = tmp_path / "src"
    _tree(source)
    (tmp_path / "out" / "evals" / "prompt.md").mkdir(parents=True)  # a folder where the copy goes
    result = run_chatconv("migrate", source, "--to", "tests", "-o", tmp_path / "out")
    assert result.returncode == 2 and "Traceback" not in result.stderr_text
    assert f"{tmp_path / 'out' / 'evals' / 'prompt.md'}" in result.stderr_text and "cannot be written" in result.stderr_text
    assert (tmp_path / "out" / "graders/check.sh").exists()  # the run went on


def test_tools_state_is_not_copied(tmp_path):
    source = tmp_path / "src"
    _tree(source)
    for folder in (".venv/bin", ".pytest_cache", ".mypy_cache"):
        (source / folder).mkdir(parents=True)
        (source / folder / "x").write_text("state\n")
    run_chatconv("migrate", source, "--to", "tests", "-o", tmp_path / "out")
    assert not any((tmp_path / "out" / folder).exists() for folder in (".venv", ".pytest_cache", ".mypy_cache"))
