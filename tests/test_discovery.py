"""Folders are walked as git walks them: what .gitignore files ignore is skipped, --no-ignore
walks everything, and a file named is always read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from chatconv.cli import cli
from chatconv.sources import discover, walking_everything
from conftest import RECORDED

STEPS = RECORDED / "weather-steps.jsonl"


def found(*paths, everything: bool = False) -> list[str]:
    with walking_everything(everything):
        return [os.path.relpath(file, paths[0]) if os.path.isdir(paths[0]) else file
                for file, _ in discover([str(p) for p in paths])]


def touch(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("{}\n")


def test_patterns_negation_directory_and_anchored(repo):
    touch(repo, "a.jsonl", "keep.jsonl", "out.jsonl", "sub/out.jsonl", "sub/c.yaml", "build/b.json", "sub/build/x.json")
    (repo / ".gitignore").write_text("# comment\n*.jsonl\n!keep.jsonl\n!sub/*.jsonl\nbuild/\n/out.jsonl\n")
    assert found(repo) == ["keep.jsonl", "sub/c.yaml", "sub/out.jsonl"]
    # `/out.jsonl` is anchored at the .gitignore's folder: sub/out.jsonl is taken back by the negation only
    assert found(repo, everything=True) == ["a.jsonl", "keep.jsonl", "out.jsonl", "build/b.json", "sub/c.yaml",
                                            "sub/out.jsonl", "sub/build/x.json"]


def test_nested_gitignore_applies_to_its_folder_and_below_and_wins(repo):
    touch(repo, "top.json", "logs/a.json", "logs/deep/b.json", "logs/keep.json", "other/a.json")
    (repo / ".gitignore").write_text("a.json\n")
    (repo / "logs" / ".gitignore").write_text("*.json\n!keep.json\n!a.json\n")
    # logs/.gitignore takes a.json back below logs/ only; other/a.json stays ignored
    assert found(repo) == ["top.json", "logs/a.json", "logs/keep.json"]


def test_a_subfolder_walked_gets_the_rules_above_it_up_to_the_repository_root(repo):
    touch(repo, "data/run/a.json", "data/run/b.yaml")
    (repo / ".gitignore").write_text("*.yaml\n")
    (repo / ".git" / "info").mkdir()
    (repo / ".git" / "info" / "exclude").write_text("a.json\n")
    assert found(repo / "data" / "run") == []
    assert found(repo / "data" / "run", everything=True) == ["a.json", "b.yaml"]


def test_outside_a_repository_only_the_walked_folders_own_rules_apply(tmp_path):
    touch(tmp_path, "walked/a.json", "walked/b.json")
    (tmp_path / ".gitignore").write_text("a.json\n")  # above the walk, and no repository: not applied
    (tmp_path / "walked" / ".gitignore").write_text("b.json\n")
    assert found(tmp_path / "walked") == ["a.json"]


def test_an_ignored_file_named_is_read(repo):
    touch(repo, "a.jsonl")
    (repo / ".gitignore").write_text("*.jsonl\n")
    assert found(repo) == []
    assert found(repo / "a.jsonl") == [str(repo / "a.jsonl")]


def test_commands_skip_ignored_files_and_no_ignore_walks_them(repo, monkeypatch):
    shutil.copy(STEPS, repo / "run.jsonl")
    (repo / "run.jsonl").write_bytes(STEPS.read_bytes() + b"{not json\n")
    (repo / ".gitignore").write_text("run.jsonl\n")
    monkeypatch.chdir(repo)
    runner = CliRunner()
    skipped = runner.invoke(cli, ["validate", "."])
    assert skipped.exit_code == 0 and "0 files" in skipped.output
    walked = runner.invoke(cli, ["validate", "--no-ignore", "."])
    assert walked.exit_code == 1 and "run.jsonl" in walked.output
    named = runner.invoke(cli, ["validate", "run.jsonl"])
    assert named.exit_code == 1
    for command in (["text"], ["tools"], ["dataset"], ["export", "--to", "openai-chat"], ["import"], ["migrate", "--dry-run"]):
        assert runner.invoke(cli, [*command, "--help"]).output.count("--no-ignore") == 1, command
        rows = runner.invoke(cli, [*command, "--no-ignore", "."])
        assert "run.jsonl" in rows.output + (rows.stderr if rows.stderr_bytes else ""), (command, rows.output)


def test_an_unreadable_gitignore_is_a_warning_not_a_traceback(repo, monkeypatch):
    touch(repo, "a.json")
    (repo / ".gitignore").write_text("a.json\n")
    real_open = open

    def refusing_open(file, *args, **kwargs):  # as chmod 0 does, also for a test run as root
        if str(file).endswith(".gitignore"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refusing_open)
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(cli, ["validate", "."])
    assert not isinstance(result.exception, Exception), result.exception  # SystemExit or none: no traceback
    assert "chatconv: warning: " in result.stderr and "/.gitignore: cannot be read (Permission denied)" in result.stderr
    assert "(1 skipped: not chatconv records)" in result.output  # its patterns are not applied: a.json is read
    with pytest.warns(UserWarning, match="cannot be read"):  # the library, outside the command
        assert found(repo) == ["a.json"]
