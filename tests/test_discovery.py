"""Folders are walked as git walks them: what .gitignore files ignore is skipped, --no-ignore
walks everything, and a file named is always read."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from chatconv.cli import cli
from chatconv.sources import discover, walking_everything
from chatconv.sources.ignore import MAX_PATTERNS, _Pattern
from conftest import RECORDED, run_chatconv

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


def validated(repo: Path, timeout: float = 20):
    """`chatconv validate --show-files` run on `repo`: its files are "{}", so each one found is
    listed as skipped (not a chatconv record)."""
    result = run_chatconv("validate", "--show-files", ".", cwd=repo, timeout=timeout)
    assert result.returncode == 0, result.stderr_text
    return result


# What git says of each (`git check-ignore`: it ignores nothing by them) and the warning's reason.
GIT_SKIPS = {"\\": "a pattern ending in a lone backslash", "a\\": "a pattern ending in a lone backslash",
             "!": "a `!` with no pattern after it", "!\\": "a pattern ending in a lone backslash",
             "**\\": "a pattern ending in a lone backslash"}


@pytest.mark.parametrize("line, reason", [*GIT_SKIPS.items(),
                                          ("[z-a]", "a bracket expression that cannot be read (bad character range z-a)"),
                                          ("a" * 5000, "a pattern longer than 4,096 characters")])
def test_a_line_that_cannot_be_applied_is_skipped_with_a_warning_not_a_traceback(repo, line, reason):
    touch(repo, "kept.json", "ignored.json", "sub/other.json")
    (repo / ".gitignore").write_text(f"# {line!r} is skipped, the rest applied\n{line}\nignored.json\n{line}\n")
    result = validated(repo)
    assert f"/.gitignore:2: {reason}: skipped" in result.stderr_text
    assert result.stderr_text.count("chatconv: warning: ") == 1 and "(and 1 more line skipped)" in result.stderr_text
    assert "kept.json: skipped" in result.stdout_text and "other.json: skipped" in result.stdout_text
    assert "ignored.json" not in result.stdout_text


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("line", GIT_SKIPS)
def test_git_ignores_nothing_by_a_line_chatconv_skips(tmp_path, line):
    names = ["a", "a\\", "\\", "!", "b"]
    touch(tmp_path, *names)
    (tmp_path / ".gitignore").write_text(f"{line}\nb\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=20)
    result = subprocess.run(["git", "-C", str(tmp_path), "check-ignore", "--no-index", "--", *names],
                            capture_output=True, text=True, timeout=20)
    assert result.stdout.split() == ["b"], result  # the line after is applied


def test_a_huge_sparse_gitignore_is_read_only_to_its_first_mib(repo):
    touch(repo, "kept.json", "ignored.json", "late.json")
    with open(repo / ".gitignore", "w") as stream:
        stream.write("ignored.json\n")
    os.truncate(repo / ".gitignore", 3 << 30)  # sparse: 3 GB of NUL bytes, no disk used
    with open(repo / ".gitignore", "a") as stream:
        stream.write("\nlate.json\n")
    result = validated(repo)
    assert "/.gitignore: larger than 1 MiB: the patterns after its first 1 MiB are not applied" in result.stderr_text
    assert "kept.json: skipped" in result.stdout_text and "late.json: skipped" in result.stdout_text
    assert "ignored.json" not in result.stdout_text


def test_patterns_built_to_backtrack_match_in_linear_time(repo):
    # pathspec's regular expressions backtracked on these without end (20 `*a` against 250 `a`s:
    # every way to split them), and `**` between parts likewise against a deep path
    deep = "/".join(["a"] * 40)
    touch(repo, "a" * 250 + ".json", f"{deep}/a.json", "kept.json", "ignored.json")
    (repo / ".gitignore").write_text("*a" * 20 + "*b\n" + "**/a" * 12 + "/**/b\n" + "*" * 3000 + "b\nignored.json\n")
    result = validated(repo)
    assert result.stderr_text == ""
    assert "a" * 250 + ".json: skipped" in result.stdout_text and f"{deep}/a.json: skipped" in result.stdout_text
    assert "kept.json: skipped" in result.stdout_text and "ignored.json" not in result.stdout_text


def test_only_the_first_patterns_of_a_gitignore_are_applied(repo):
    touch(repo, "kept.json", "ignored.json", "late.json")
    lines = ["ignored.json"] + [f"name{number}" for number in range(100_000)] + ["late.json"]
    (repo / ".gitignore").write_text("\n".join(lines) + "\n")  # under 1 MiB
    result = validated(repo)
    assert f"/.gitignore: more than {MAX_PATTERNS:,} patterns: those from line {MAX_PATTERNS + 1} on are not applied" in result.stderr_text
    assert "kept.json: skipped" in result.stdout_text and "late.json: skipped" in result.stdout_text
    assert "ignored.json" not in result.stdout_text


PATHSPEC_PATHS = ["a.jsonl", "keep.jsonl", "sub/a.jsonl", "sub/deep/b.yaml", "build/", "build/x.json", "sub/build/",
                  "sub/build/x", "out.jsonl", "sub/out.jsonl", "logs/", "logs/a/b/c.log", "x.log", "a b.json",
                  "doc/x/y/z.md", "doc/z.md", "[x].json", "#c", "!bang", "trail ", "v1.2.3", "aXbYc", ".env/", "é.json"]
PATHSPEC_PATTERNS = ["*.jsonl", "!keep.jsonl", "build/", "/out.jsonl", "sub/*.jsonl", "logs/**", "**/deep", "doc/**/z.md",
                     "a?b?c", "*.[jy]*", "[!a]*.json", "a\\ b.json", "\\[x].json", "\\#c", "\\!bang", "trail\\ ", "*",
                     "*/", "**/", "/**", "sub/**/", "v*.*.*", "*b*", ".env/", "?.json", "sub", "/sub/deep", "*.log/",
                     "**/*.md", "a/**/b", "é*", "[a-c]*", "*[0-9]", "**/build/**"]


def test_patterns_mean_what_pathspecs_regular_expressions_meant():
    from pathspec import GitIgnoreSpec  # what matched them before: the test extra's
    for line in PATHSPEC_PATTERNS:
        theirs, ours = GitIgnoreSpec.from_lines([line]).patterns[0], _Pattern.read(line)
        assert ours.include == theirs.include, line
        for path in PATHSPEC_PATHS:
            assert bool(ours.regex.match(path)) == bool(theirs.match_file(path)), (line, path)
