"""--select / --ignore CODE and the [tool.chatconv] table of pyproject.toml: which problems a run
reports, what the summary says of the others, and a bad setting stopped with a clear message."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from chatconv.cli.settings import (Selection, SettingsError, find_pyproject, read_settings, split_codes,
                                   unknown_code_text)
from chatconv.problems import CODES
from chatconv.validate import Validator
from conftest import run_chatconv

# Two errors (unknown-key, bad-value) and a warning (legacy-shape) in one eval file.
EVAL = "eval_cases:\n  - {id: a, outcom: x, input_messages: [{role: human, content: hi}]}\n"
STEPS = ('{"conversationId": "c", "stepIndex": 1, "input": {"role": "user", "content": "hi"}, "output": []}\n'
         '{"conversationId": "c", "stepIndex": 0, "input": {"role": "user", "content": "hi"}, "output": []}\n'
         "{broken\n")


@pytest.fixture
def folder(tmp_path) -> Path:
    (tmp_path / ".git").mkdir()  # an eval file outside a repository is an error to AgentV (no-repository)
    (tmp_path / "e.yaml").write_text(EVAL)
    (tmp_path / "r.jsonl").write_text(STEPS)
    return tmp_path


def _json(result) -> dict:
    return json.loads(result.stdout)


def test_select_keeps_only_those_codes_and_ignore_drops_them(folder):
    every = _json(run_chatconv("validate", "--format", "json", folder))
    assert {p["code"] for p in every["problems"]} == {"legacy-shape", "unknown-key", "bad-value", "step-order",
                                                       "invalid-json"}
    selected = run_chatconv("validate", "--format", "json", "--select", "unknown-key,step-order", folder)
    report = _json(selected)
    assert [p["code"] for p in report["problems"]] == [p["code"] for p in every["problems"]
                                                       if p["code"] in ("unknown-key", "step-order")]
    assert report["ignored"] == len(every["problems"]) - len(report["problems"]) == 3
    ignored = _json(run_chatconv("validate", "--format", "json", "--ignore", "legacy-shape", "--ignore",
                                 "invalid-json", folder))
    assert {p["code"] for p in ignored["problems"]} == {"unknown-key", "bad-value", "step-order"}
    assert (ignored["errors"], ignored["warnings"], ignored["ignored"]) == (every["errors"] - 1, 0, 2)


def test_ignored_errors_do_not_fail_the_run_and_the_summary_says_so(folder):
    result = run_chatconv("validate", "--ignore", "unknown-key,bad-value,step-order,invalid-json", folder)
    assert result.returncode == 0
    lines = result.stdout_text.splitlines()
    assert lines[0].startswith(f"{folder / 'e.yaml'}:1:1: warning: $.eval_cases: ")
    assert lines[1:] == ["2 files, 3 records: 0 errors, 1 warning (4 ignored: select / ignore)",
                         "  1 × legacy-shape (warning)"]
    # --ignore wins over --select
    both = run_chatconv("validate", "--select", "bad-value", "--ignore", "bad-value", folder / "e.yaml")
    assert both.returncode == 0 and "0 errors, 0 warnings (3 ignored" in both.stdout_text


def test_unreadable_input_is_never_ignored(folder):
    result = run_chatconv("validate", "--select", "bad-value", "--ignore", "unreadable-file", folder / "gone.yaml",
                          folder / "e.yaml")
    assert result.returncode == 2
    assert f"{folder / 'gone.yaml'}:1:1: error: $: no such file" in result.stdout_text
    assert "(2 ignored: select / ignore)" in result.stdout_text


def test_unknown_codes_are_usage_errors_naming_the_closest_or_all(folder):
    close = run_chatconv("validate", "--ignore", "legacy-shape,mising-key", folder)
    assert close.returncode == 2 and "unknown code 'mising-key' (did you mean 'missing-key'?)" in close.stderr_text
    far = run_chatconv("validate", "--select", "E501", folder)
    assert far.returncode == 2 and "unknown code 'E501'; the codes are: " + ", ".join(CODES) in far.stderr_text


def test_split_codes_takes_repeats_and_commas():
    assert split_codes(("a,b", " c ", "d,,")) == ("a", "b", "c", "d")
    assert unknown_code_text("step-ordr").endswith("(did you mean 'step-order'?)")


def test_max_errors_counts_only_the_errors_reported(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("{broken\n" * 5 + "{}\n" * 5)
    validator = Validator(kind="step", max_errors=2, keep=Selection(ignore=frozenset({"invalid-json"})).keeps)
    problems = list(validator.run([path]))
    # the 5 broken lines come first: counted as errors, they would have stopped the run at line 2
    assert [(p.line, p.code) for p in problems] == [(6, "missing-key")] * 2
    assert validator.summary.ignored == 5 and validator.summary.stopped


CODES_FOUND = ["legacy-shape", "unknown-key", "bad-value", "step-order", "invalid-json"]


@settings(max_examples=25, deadline=None)
@given(select=st.none() | st.sets(st.sampled_from(CODES_FOUND), min_size=1),
       ignore=st.sets(st.sampled_from(CODES_FOUND)))
def test_a_selection_reports_exactly_the_kept_problems_and_counts_the_rest(tmp_path_factory, select, ignore):
    folder = tmp_path_factory.getbasetemp() / "selection-property"
    if not folder.exists():
        folder.mkdir()
        (folder / "e.yaml").write_text(EVAL)
        (folder / "r.jsonl").write_text(STEPS)
    every = list(Validator().run([folder]))
    selection = Selection(None if select is None else frozenset(select), frozenset(ignore))
    validator = Validator(keep=selection.keeps)
    kept = list(validator.run([folder]))
    expected = [p for p in every if p.code not in ignore and (select is None or p.code in select)]
    assert kept == expected
    summary = validator.summary
    assert summary.ignored == len(every) - len(kept)
    assert (summary.errors, summary.warnings) == (sum(p.is_error for p in kept), sum(not p.is_error for p in kept))


def _pyproject(folder: Path, text: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_the_nearest_pyproject_with_a_chatconv_table_is_read_and_flags_override_it(folder):
    _pyproject(folder, """\
        [tool.chatconv]
        ignore = ["unknown-key", "bad-value"]
        max-warnings = 0
    """)
    work = folder / "a" / "b"
    work.mkdir(parents=True)
    _pyproject(folder / "a", "[project]\nname = 'other'\n")  # no [tool.chatconv]: passed over
    assert find_pyproject(work) == folder / "pyproject.toml"
    result = run_chatconv("validate", "--format", "json", folder / "e.yaml", cwd=work)
    report = _json(result)
    assert result.returncode == 0 and report["problems"] == [] and report["ignored"] == 2
    assert report["not_printed"] == 1  # max-warnings = 0
    flags = _json(run_chatconv("validate", "--format", "json", "--ignore", "bad-value", "--max-warnings", "5",
                               folder / "e.yaml", cwd=work))
    assert [p["code"] for p in flags["problems"]] == ["legacy-shape", "unknown-key"]


@pytest.mark.parametrize("text, message", [
    ('[tool.chatconv]\nselect = ["bad-value"]\nignroe = ["x"]\n', ":3: [tool.chatconv] unknown key 'ignroe' (did you mean 'ignore'?)"),
    ('[tool.chatconv]\nignore = "bad-value"\n', ':2: [tool.chatconv] ignore must be a list of codes'),
    ('[tool.chatconv]\n\nselect = ["bad-valu"]\n', ":3: [tool.chatconv] select: unknown code 'bad-valu' (did you mean 'bad-value'"),
    ('[tool.other]\nselect = []\n\n[tool.chatconv]\nselect = []\n', ":5: [tool.chatconv] select lists no code"),
    ('[tool.chatconv]\nmax-warnings = -1\n', ":2: [tool.chatconv] max-warnings must be a whole number"),
    ('[tool.chatconv]\nmax-warnings = true\n', ":2: [tool.chatconv] max-warnings must be a whole number"),
    ('[tool]\nchatconv = 3\n', ":2: [tool.chatconv] must be a table"),
    ('[tool.chatconv\nselect = []\n', ": not valid TOML: Expected ']' at the end of a table declaration (at line 1"),
])
def test_a_bad_table_names_the_file_the_line_and_the_fault(tmp_path, text, message):
    path = _pyproject(tmp_path, text)
    with pytest.raises(SettingsError) as caught:
        read_settings(path) if "not valid TOML" not in message else find_pyproject(tmp_path)
    assert caught.value.format_message().startswith(f"{path}{message}")


def test_a_table_rewritten_is_read_as_it_is_now(folder):
    # read_settings and find_pyproject read the file each time they are called (a run reads its
    # settings once, in current_settings): a library caller sees the table as it is now.
    path = _pyproject(folder, '[tool.chatconv]\nignore = ["legacy-shape"]\n')
    assert read_settings(path).ignore == ("legacy-shape",)
    _pyproject(folder, '[tool.chatconv]\nignore = ["bad-value"]\n')
    assert read_settings(path).ignore == ("bad-value",)
    _pyproject(folder, '[project]\nname = "x"\n')
    assert find_pyproject(folder) is None


def test_a_pyproject_not_utf8_is_a_message_and_a_tool_that_is_no_table_holds_none(folder):
    path = folder / "pyproject.toml"
    path.write_bytes(b'[tool.chatconv]\nselect = ["\xff"]\n')
    result = run_chatconv("validate", folder / "e.yaml", cwd=folder)  # run_chatconv fails on a traceback
    assert result.returncode == 2
    assert f"{path}: not valid TOML: a byte that is not UTF-8 (at line 2)" in result.stderr_text
    path.write_text("tool = 3\n")  # a pyproject.toml without a [tool.chatconv] table
    assert find_pyproject(folder) is None
    assert run_chatconv("validate", folder / "e.yaml", cwd=folder).returncode == 1


def test_flags_given_empty_replace_the_table_or_are_refused(folder):
    _pyproject(folder, '[tool.chatconv]\nignore = ["unknown-key", "bad-value", "legacy-shape"]\n')
    assert _json(run_chatconv("validate", "--format", "json", folder / "e.yaml", cwd=folder))["ignored"] == 3
    none_ignored = _json(run_chatconv("validate", "--format", "json", "--ignore", "", folder / "e.yaml", cwd=folder))
    assert none_ignored["ignored"] == 0 and len(none_ignored["problems"]) == 3
    for empty in ("", ","):
        result = run_chatconv("validate", "--select", empty, folder / "e.yaml", cwd=folder)
        assert result.returncode == 2 and "'--select': lists no code" in result.stderr_text


def test_a_bad_table_stops_the_command_with_exit_status_2(folder):
    path = _pyproject(folder, '[tool.chatconv]\nignore = ["legacy-shap"]\n')
    result = run_chatconv("validate", folder / "e.yaml", cwd=folder)
    assert result.returncode == 2 and result.stdout_text == ""
    assert f"{path}:2: [tool.chatconv] ignore: unknown code 'legacy-shap'" in result.stderr_text


ORPHAN = ('{"conversationId": "c", "stepIndex": 0, "input": {"role": "user", "content": "hi"}, "output": [{"role":'
          ' "tool", "content": [{"type": "tool-result", "toolCallId": "z", "toolName": "t", "output": {"type": "text",'
          ' "value": "v"}}]}]}\n')


def test_import_export_and_the_recording_commands_take_select_and_ignore_too(tmp_path):
    steps = tmp_path / "steps.jsonl"
    steps.write_text(ORPHAN)
    # import: a chatconv recording is refused with an error; ignored, the run passes and says so
    refused = run_chatconv("import", steps, "--ignore", "unknown-format")
    assert refused.returncode == 0 and refused.stderr_text.endswith("(1 ignored: select / ignore)\n")
    assert "already a chatconv recording" not in refused.stderr_text  # its error without --ignore (test_cli_formats)
    # tools: the orphan result, an error, is ignored after its row is written; unreadable input is not
    tools = run_chatconv("tools", steps, tmp_path / "gone.jsonl", "--ignore", "tool-result-orphan")
    assert tools.returncode == 2 and "gone.jsonl:1:1: error: $: no such file" in tools.stderr_text
    assert "answers no earlier tool-call" not in tools.stderr_text
    assert tools.stderr_text.endswith("(1 ignored: select / ignore)\n")
    assert run_chatconv("export", steps, "--to", "openai-chat", "--select", "step-order").stderr_text.endswith(
        "written (1 ignored: select / ignore)\n")
