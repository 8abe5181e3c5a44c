"""Symlinks that could steer chatconv outside the folders it was given: a file reference swapped
for a link to a file outside the repository between its check and its read, and links found in
a folder `migrate` rewrites."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from chatconv.cli import cli
from conftest import run_chatconv
from chatconv.references import FileReferenceError, open_reference


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A repository whose eval file refers to link.md, a link to notes.md inside it; and a
    secret file outside the repository."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "notes.md").write_text("inside the repository")
    (tmp_path / "secret.md").write_text("SECRET from outside")
    (repo / "link.md").symlink_to(repo / "notes.md")
    eval_file = repo / "e.yaml"
    eval_file.write_text("evalcases:\n  - id: c\n    outcome: o\n    input_messages:\n"
                         "      - {role: user, content: [{type: file, value: link.md}]}\n")
    return {"repo": repo, "inside": repo / "notes.md", "outside": tmp_path / "secret.md", "link": repo / "link.md",
            "eval": eval_file}


def swap_link_after_the_root_check(monkeypatch, tree) -> list[str]:
    """The race an attacker runs, made certain: the link points inside the repository whenever a
    reference is looked up, and at the secret outside it once the root check has passed.
    Says what ran, to show the hook did."""
    from chatconv import references

    check, look_up = Path.is_relative_to, references.search_folders
    inside, ran = tree["inside"].resolve(), []

    def point_link_at(target: Path) -> None:
        tree["link"].unlink()
        tree["link"].symlink_to(target)
        ran.append(target.name)

    def looked_up_inside(*args):
        point_link_at(tree["inside"])
        return look_up(*args)

    def checked_then_swapped(self, *other):
        passed = check(self, *other)
        if self == inside:
            point_link_at(tree["outside"])
        return passed

    monkeypatch.setattr(references, "search_folders", looked_up_inside)
    monkeypatch.setattr(Path, "is_relative_to", checked_then_swapped)
    return ran


def test_prompt_reads_the_file_it_checked_not_a_link_swapped_after_the_check(tree, monkeypatch):
    swapped = swap_link_after_the_root_check(monkeypatch, tree)
    result = CliRunner().invoke(cli, ["prompt", str(tree["eval"])])
    assert "secret.md" in swapped, "the hook must run between the check and the read"
    assert "SECRET" not in result.output + str(result.exception)
    assert result.exit_code == 0, result.exception
    assert json.loads(result.output.splitlines()[0])["question"] == '<file path="link.md">\ninside the repository\n</file>'


def test_open_reference_reads_from_the_file_it_checked(tree, monkeypatch):
    swapped = swap_link_after_the_root_check(monkeypatch, tree)
    real, data = open_reference("link.md", tree["repo"], tree["repo"])
    assert "secret.md" in swapped and data == b"inside the repository" and real == tree["inside"].resolve()


def test_without_proc_a_link_swapped_after_the_open_is_seen_and_refused(tree, monkeypatch):
    # Where /proc/self/fd cannot say what was opened, the link is resolved again and must lead
    # to the very file opened: swapped in between, the read is refused, never made by name.
    readlink = os.readlink

    def no_proc_and_a_swap(path, *args, **kwargs):
        if str(path).startswith("/proc/"):
            tree["link"].unlink()
            tree["link"].symlink_to(tree["outside"])
            raise OSError(2, "no /proc here")
        return readlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "readlink", no_proc_and_a_swap)
    with pytest.raises(FileReferenceError, match="changed while it was read"):
        open_reference("link.md", tree["repo"], tree["repo"])


def test_without_proc_a_link_inside_the_root_is_read(tree, monkeypatch):
    readlink = os.readlink

    def no_proc(path, *args, **kwargs):
        if str(path).startswith("/proc/"):
            raise OSError(2, "no /proc here")
        return readlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "readlink", no_proc)
    assert open_reference("link.md", tree["repo"], tree["repo"]) == (tree["inside"].resolve(),
                                                                     b"inside the repository")


def test_a_link_out_of_the_root_is_refused_unless_allowed(tree):
    tree["link"].unlink()
    tree["link"].symlink_to(tree["outside"])
    with pytest.raises(FileReferenceError, match="resolves outside the repository root"):
        open_reference("link.md", tree["repo"], tree["repo"])
    result = run_chatconv("prompt", tree["eval"])
    assert result.returncode == 1 and "resolves outside the repository root" in result.stderr_text
    assert "SECRET" not in result.stdout_text + result.stderr_text
    allowed = run_chatconv("prompt", tree["eval"], "--allow-outside-root")
    assert allowed.returncode == 0 and "SECRET from outside" in allowed.stdout_text


def test_links_inside_the_root_are_read_as_before(tree):
    (tree["repo"] / "sub").mkdir()
    (tree["repo"] / "sub" / "deep.md").symlink_to("../link.md")  # a link to a link, both inside
    assert open_reference("sub/deep.md", tree["repo"], tree["repo"])[1] == b"inside the repository"
    result = run_chatconv("prompt", tree["eval"])
    assert result.returncode == 0 and "inside the repository" in result.stdout_text


def test_a_case_file_swapped_after_its_check_is_not_read(tree, monkeypatch):
    # The same race on a case file (`tests: ./link.md` names a link): its cases would be prompts.
    tree["inside"].write_text("- {id: c, criteria: c, input: inside the repository}\n")
    tree["outside"].write_text("- {id: c, criteria: c, input: SECRET from outside}\n")
    tree["link"].unlink()
    tree["link"].symlink_to(tree["inside"])
    (tree["repo"] / "link.yaml").symlink_to("link.md")
    tree["eval"].write_text("tests: ./link.yaml\n")
    swapped = swap_link_after_the_root_check(monkeypatch, tree)
    result = CliRunner().invoke(cli, ["prompt", str(tree["eval"])])
    assert "secret.md" in swapped
    assert "SECRET" not in result.output + str(result.exception)
    assert "resolves outside the repository root" in str(result.exception)


def test_a_case_folder_whose_case_file_links_out_of_the_root_is_refused(tree):
    (tree["repo"] / "cases" / "one").mkdir(parents=True)
    tree["outside"].write_text("id: c\ncriteria: c\ninput: SECRET from outside\n")
    (tree["repo"] / "cases" / "one" / "case.yaml").symlink_to(tree["outside"])
    tree["eval"].write_text("tests: ./cases\n")
    result = run_chatconv("prompt", tree["eval"])
    assert "SECRET" not in result.stdout_text + result.stderr_text
    assert result.returncode == 1 and "resolves outside the repository root" in result.stderr_text


# ---------------------------------------------------------------------------------------------
# migrate: links found in a folder

LEGACY_LINE = b'{"stepIndex":0,"input":{"role":"user","content":"a"},"output":{"role":"assistant","content":"x"}}\n'
MIGRATED_LINE = b'{"stepIndex":0,"input":{"role":"user","content":"a"},"output":[{"role":"assistant","content":"x"}]}\n'


@pytest.fixture
def cloned(tmp_path: Path) -> dict[str, Path]:
    """A folder (a cloned repository, say) holding a recording, a link to a file outside it, a
    link to a folder outside it, and a link to its own recording; and the files outside."""
    folder, outside = tmp_path / "clone", tmp_path / "home"
    (outside / "private").mkdir(parents=True)
    folder.mkdir()
    (outside / "victim.jsonl").write_bytes(LEGACY_LINE)
    (outside / "private" / "deep.jsonl").write_bytes(LEGACY_LINE)
    (folder / "own.jsonl").write_bytes(LEGACY_LINE)
    (folder / "out.jsonl").symlink_to(outside / "victim.jsonl")
    (folder / "private").symlink_to(outside / "private")
    (folder / "alias.jsonl").symlink_to("own.jsonl")
    return {"folder": folder, "victim": outside / "victim.jsonl", "deep": outside / "private" / "deep.jsonl",
            "own": folder / "own.jsonl", "outside": outside}


def test_in_place_on_a_folder_never_writes_through_a_link_out_of_it(cloned):
    result = run_chatconv("migrate", "--in-place", "--backup", f"{cloned['folder']}/")
    assert result.returncode == 0, result.stderr_text
    assert cloned["victim"].read_bytes() == LEGACY_LINE and cloned["deep"].read_bytes() == LEGACY_LINE
    assert sorted(p.name for p in cloned["outside"].rglob("*")) == ["deep.jsonl", "private", "victim.jsonl"]
    out, alias = cloned["folder"] / "out.jsonl", cloned["folder"] / "alias.jsonl"
    assert (f"{out}: warning: skipped: a symlink to a file outside {cloned['folder']}/ ({cloned['victim']})"
            in result.stderr_text)
    assert f"{cloned['folder'] / 'private'}: warning: skipped: a symlink to a folder outside" in result.stderr_text
    # The folder's own recording is migrated once, under its own name; the links stay links.
    assert cloned["own"].read_bytes() == MIGRATED_LINE and (cloned["folder"] / "own.jsonl.bak").exists()
    assert f"{alias}: warning: skipped: a symlink (to {cloned['own']})" in result.stderr_text
    assert out.is_symlink() and alias.is_symlink()
    assert "1 file, 1 record read: 1 migrated" in result.stderr_text


def test_output_to_a_folder_leaves_out_links_out_of_the_searched_folder(cloned, tmp_path):
    result = run_chatconv("migrate", cloned["folder"], "-o", tmp_path / "migrated")
    assert result.returncode == 0, result.stderr_text
    assert sorted(p.name for p in (tmp_path / "migrated").iterdir()) == ["alias.jsonl", "own.jsonl"]
    assert "skipped: a symlink to a file outside" in result.stderr_text


def test_a_link_named_on_the_command_line_is_still_followed(cloned):
    result = run_chatconv("migrate", "--in-place", cloned["folder"] / "out.jsonl")
    assert result.returncode == 0, result.stderr_text
    assert cloned["victim"].read_bytes() == MIGRATED_LINE and (cloned["folder"] / "out.jsonl").is_symlink()
