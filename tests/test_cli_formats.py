"""`chatconv import` and `chatconv export` as a user runs them: output, summary, exit codes, bad input."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from conftest import RECORDED, run_chatconv

DATA = Path(__file__).parent / "data" / "formats"
FINETUNE = DATA / "openai-chat" / "finetune.jsonl"


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_import_writes_valid_steps_and_says_what_it_read(tmp_path):
    result = run_chatconv("import", str(FINETUNE))
    assert result.returncode == 0, result.stderr_text
    steps = _lines(result.stdout_text)
    assert len(steps) == 6 and all("stepIndex" in step for step in steps)
    assert result.stderr_text.strip() == "3 records read (3 openai-chat): 3 conversations, 6 steps written"
    out = tmp_path / "steps.jsonl"
    out.write_text(result.stdout_text)
    checked = run_chatconv("validate", str(out))
    assert checked.returncode == 0 and "0 errors, 0 warnings" in checked.stdout_text


def test_import_conversations_and_an_output_file(tmp_path):
    out = tmp_path / "conversations.jsonl"
    result = run_chatconv("import", str(FINETUNE), "--conversations", "-o", str(out))
    assert result.returncode == 0 and result.stdout == b""
    conversations = _lines(out.read_text())
    assert [c["id"] for c in conversations] == ["finetune.jsonl:1", "finetune.jsonl:2", "finetune.jsonl:3"]
    assert [len(c["steps"]) for c in conversations] == [2, 3, 1]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # the temporary file is gone


@pytest.mark.parametrize("command", [["import", str(FINETUNE)], ["export", str(RECORDED / "weather-steps.jsonl"),
                                                                    "--to", "anthropic"]])
def test_an_output_file_in_a_missing_folder_is_named(tmp_path, command):
    out = tmp_path / "gone" / "out.jsonl"
    result = run_chatconv(*command, "-o", str(out))
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr_text.startswith(f"{out}:1:1: error: $: cannot write here: No such file or directory")


@pytest.mark.parametrize("command", [["import", str(FINETUNE)], ["export", str(RECORDED / "weather-steps.jsonl"),
                                                                    "--to", "anthropic"]])
def test_an_output_that_is_a_pipe_is_written_to_not_replaced(tmp_path, command):
    # As root, -o /dev/null would otherwise put a regular file in /dev/null's place.
    out = tmp_path / "pipe"
    os.mkfifo(out)
    read = []
    # A daemon: were the pipe replaced, the reader would wait on it for ever, and the test fail, not hang.
    reader = threading.Thread(target=lambda: read.append(out.read_bytes()), daemon=True)
    reader.start()
    result = run_chatconv(*command, "-o", str(out))
    reader.join(timeout=60)
    assert not reader.is_alive(), "the pipe was not written to"
    assert result.returncode == 0, result.stderr_text
    assert read == [run_chatconv(*command).stdout] and read[0]
    assert stat.S_ISFIFO(os.lstat(out).st_mode) and [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_import_takes_folders_and_standard_input(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(FINETUNE.read_bytes())
    (folder / "b.json").write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ho"}]))
    result = run_chatconv("import", str(folder))
    assert result.returncode == 0, result.stderr_text
    assert {s["conversationId"].split(":")[0] for s in _lines(result.stdout_text)} == {"a.jsonl", "b.json"}
    piped = run_chatconv("import", "-", stdin=FINETUNE.read_bytes())
    assert piped.returncode == 0 and len(_lines(piped.stdout_text)) == 6


@pytest.mark.parametrize("content, status, expected", [
    ('{"hello": "world"}\n', 1, "x.jsonl:1:1: error: $: cannot tell which format this record is in (name it with --from"),
    ('[{"role": "user", "content": "hi"}]\n[{"role": "user", "con', 1, "x.jsonl:2:"),
    ('[{"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": 3}}]}]\n', 1,
     "error: $[0].tool_calls[0]: a tool call needs an id, a type (function or custom) and its name"),
    ('[{"role": "tool", "tool_call_id": "gone", "content": "x"}]\n', 1,
     "error: $[0]: tool result 'gone' answers no earlier tool call of its conversation"),
    ("", 1, "the file is empty"),
    ("[]\n", 0, "x.jsonl:1:1: warning: $: an empty array: no record to import"),
])
def test_bad_records_are_problems_with_their_place_never_tracebacks(tmp_path, content, status, expected):
    bad = tmp_path / "x.jsonl"
    bad.write_text(content)
    result = run_chatconv("import", str(bad), cwd=tmp_path)
    assert result.returncode == status and expected in result.stderr_text, result.stderr_text
    assert "Traceback" not in result.stderr_text


@pytest.mark.parametrize("name, text, where", [
    ("bodies.json", '[\n {"payload": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}},\n'
     ' {"payload": {"messages": [{"role": "tool", "tool_call_id": "gone", "content": "x"}]}}\n]\n', "bodies.json:3:"),
    ("bodies.yaml", "- payload:\n    model: m\n    messages:\n    - {role: user, content: hi}\n- payload:\n"
     "    messages:\n    - {role: tool, tool_call_id: gone, content: x}\n", "bodies.yaml:7:"),
])
def test_an_array_of_bodies_is_read_element_by_element_each_adapted_and_located(tmp_path, name, text, where):
    (tmp_path / name).write_text(text)
    result = run_chatconv("import", name, "--field", "messages=payload.messages", cwd=tmp_path)
    [step] = _lines(result.stdout_text)
    # the line's other keys (no Chat Completions body has `payload`) kept as a dataset row's columns
    assert step["input"] == {"role": "user", "content": "hi"} and step["metadata"] == {"hf-messages": {"payload": {"model": "m"}}}
    assert step["conversationId"] == f"{name}:{2 if name.endswith('json') else 1}"  # the element's own line
    assert result.returncode == 1 and f"{where}" in result.stderr_text, result.stderr_text
    assert "error: $[1].messages[0]: tool result 'gone' answers no earlier tool call" in result.stderr_text


def test_a_missing_file_and_an_unknown_format_are_usage_problems(tmp_path):
    missing = run_chatconv("import", str(tmp_path / "gone.jsonl"))
    assert missing.returncode == 2 and "gone.jsonl" in missing.stderr_text and "Traceback" not in missing.stderr_text
    unknown = run_chatconv("import", str(FINETUNE), "--from", "palm")
    assert unknown.returncode == 2 and "Invalid value for '--from': 'palm'" in unknown.stderr_text


def test_a_chatconv_recording_given_to_import_is_named_as_one(tmp_path):
    result = run_chatconv("import", str(RECORDED / "weather-steps.jsonl"))
    assert result.returncode == 1 and result.stdout == b""
    assert "weather-steps.jsonl:1:1: error: $: already a chatconv recording (AI SDK steps): nothing to import" \
        in result.stderr_text


def test_forcing_a_format_that_does_not_fit_is_an_error_at_the_record(tmp_path):
    result = run_chatconv("import", str(RECORDED / "weather-steps.jsonl"), "--from", "openai-chat")
    assert result.returncode == 1 and "weather-steps.jsonl:1:" in result.stderr_text


def test_export_gives_back_the_imported_fine_tuning_file(tmp_path):
    steps = tmp_path / "steps.jsonl"
    steps.write_text(run_chatconv("import", str(FINETUNE)).stdout_text)
    result = run_chatconv("export", str(steps), "--to", "openai-chat", "--per", "conversation")
    assert result.returncode == 0 and result.stderr_text.strip() == "6 steps read: 3 bodies written"
    assert _lines(result.stdout_text) == _lines(FINETUNE.read_text())


def test_export_per_step_writes_the_conversation_so_far_for_each_answered_step(tmp_path):
    steps = tmp_path / "steps.jsonl"
    steps.write_text(run_chatconv("import", str(FINETUNE)).stdout_text)
    bodies = _lines(run_chatconv("export", str(steps), "--to", "openai-chat").stdout_text)
    marv = _lines(FINETUNE.read_text())[1]["messages"]
    # Marv's conversation: a system step (no output, no body of its own), then two answered steps.
    assert [b["messages"] for b in bodies if b["messages"][0] == marv[0]] == [marv[:3], marv]


def test_export_of_chatconv_recordings_keeps_the_apis_rules(tmp_path):
    result = run_chatconv("export", str(RECORDED / "weather-steps.jsonl"), "--to", "openai-chat", "--gather-tools")
    assert result.returncode == 0, result.stderr_text
    bodies = _lines(result.stdout_text)
    assert bodies and all(b["messages"][0]["role"] in ("user", "system") for b in bodies)
    for body in bodies:  # each call answered by a tool message after it; tools named after the calls
        calls = [c for m in body["messages"] for c in m.get("tool_calls") or []]
        answered = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
        assert sorted(answered) == sorted(c["id"] for c in calls)
        assert {t["function"]["name"] for t in body.get("tools", [])} == {c["function"]["name"] for c in calls}


def test_export_refuses_a_body_the_api_would_refuse_at_its_step(tmp_path):
    orphan = {"conversationId": "c", "stepIndex": 0, "input": {"role": "user", "content": "x"}, "output": [
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "z", "toolName": "t",
                                      "output": {"type": "text", "value": "v"}}]}]}
    steps = tmp_path / "steps.jsonl"
    steps.write_text(json.dumps(orphan) + "\n")
    result = run_chatconv("export", str(steps), "--to", "openai-chat")
    assert result.returncode == 1 and result.stdout == b""
    assert "steps.jsonl:1:" in result.stderr_text and "not exported: openai: tool result 'z' answers no earlier" in result.stderr_text


def test_help_teaches_with_examples():
    for command in ("import", "export"):
        result = run_chatconv(command, "--help")
        assert result.returncode == 0 and "Examples:" in result.stdout_text


def test_import_reads_a_body_wrapped_in_a_log_line_with_field(tmp_path):
    body = _lines(FINETUNE.read_text())[1]
    log = tmp_path / "gateway.jsonl"
    log.write_text(json.dumps({"ts": "2026-11-01T10:00:00Z", "payload": {"messages": body["messages"]}}) + "\n")
    plain = run_chatconv("import", str(log))
    assert plain.returncode == 1 and "cannot tell which format" in plain.stderr_text
    result = run_chatconv("import", str(log), "--field", "messages=payload.messages")
    assert result.returncode == 0, result.stderr_text
    steps = _lines(result.stdout_text)
    assert [s["input"]["content"] for s in steps][1:] == ["What's the capital of France?", "Can you be more sarcastic?"]
    assert steps[0]["metadata"]["hf-messages"]["ts"] == "2026-11-01T10:00:00Z"  # the line's other keys kept
    forced = run_chatconv("import", str(log), "--field", "messages=payload.messages", "--from", "openai-chat")
    assert _lines(forced.stdout_text)[0]["metadata"]["openai-chat"]["ts"] == "2026-11-01T10:00:00Z"


def test_export_reads_several_paths_and_json_arrays_of_steps(tmp_path):
    steps = _lines(run_chatconv("import", str(FINETUNE)).stdout_text)
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps[:2]))
    (tmp_path / "b.json").write_text(json.dumps(steps[2:], indent=2))  # a JSON array of step records
    result = run_chatconv("export", str(tmp_path / "a.jsonl"), str(tmp_path / "b.json"), "--to", "openai-chat",
                          "--per", "conversation")
    assert result.returncode == 0, result.stderr_text
    assert _lines(result.stdout_text) == _lines(FINETUNE.read_text())


def test_export_follows_interleaved_conversations_of_a_step_per_line_file(tmp_path):
    def step(conversation, index, text):
        return {"conversationId": conversation, "stepIndex": index, "input": {"role": "user", "content": f"{text}?"},
                "output": [{"role": "assistant", "content": f"{text}!"}]}
    steps = [step("a", 0, "a0"), step("b", 0, "b0"), step("a", 1, "a1"), step("b", 1, "b1")]
    recording = tmp_path / "run.jsonl"
    recording.write_text("".join(json.dumps(s) + "\n" for s in steps))
    per_step = _lines(run_chatconv("export", str(recording), "--to", "openai-chat").stdout_text)
    # A body as each answered step arrives, holding its own conversation so far.
    assert [[m["content"] for m in b["messages"]] for b in per_step] == [
        ["a0?", "a0!"], ["b0?", "b0!"], ["a0?", "a0!", "a1?", "a1!"], ["b0?", "b0!", "b1?", "b1!"]]
    whole = _lines(run_chatconv("export", str(recording), "--to", "openai-chat", "--per", "conversation").stdout_text)
    assert [len(b["messages"]) for b in whole] == [4, 4] and whole[0]["messages"][0]["content"] == "a0?"


def test_export_refuses_an_integer_beyond_64_bits_rather_than_writing_a_float(tmp_path):
    step = {"conversationId": "c", "stepIndex": 0, "input": {"role": "user", "content": "hi"},
            "output": [{"role": "assistant", "content": "ho"}]}
    line = json.dumps(step)[:-1] + ', "metadata": {"openai-chat": {"seed": 123456789012345678901234567890}}}'
    recording = tmp_path / "run.jsonl"
    recording.write_text(line + "\n")
    result = run_chatconv("export", str(recording), "--to", "openai-chat")
    assert result.returncode == 1 and result.stdout == b""
    assert "123456789012345678901234567890 is beyond 64 bits" in result.stderr_text


def test_export_refuses_a_tool_call_or_result_too_deep_to_write_at_its_step(tmp_path):
    # A tool result (or call's input) written as text within the body, with orjson (255 levels at
    # most; it reads 1024), ended in a traceback.
    from chatconv.formats import EXPORTED, ExportRun, export_bodies
    step = json.loads((RECORDED / "weather-steps.jsonl").read_text().splitlines()[0])
    deep = "[" * 260 + "1" + "]" * 260
    result_too_deep = json.loads(json.dumps(step))
    result_too_deep["output"][1]["content"][0]["output"]["value"] = "DEEP"
    call_too_deep = json.loads(json.dumps(step))
    call_too_deep["output"][0]["content"][0]["input"] = {"d": "DEEP"}
    for name, record in (("result", result_too_deep), ("call", call_too_deep)):
        recording = tmp_path / f"{name}.jsonl"
        recording.write_text(json.dumps(record).replace('"DEEP"', deep) + "\n")
        for target in EXPORTED:
            run = ExportRun()
            bodies = list(export_bodies([str(recording)], target, run=run))
            if target != "alpaca":  # a row of text: it leaves tool parts out
                assert bodies == [] and [p.code for p in run.problems if p.is_error] == ["not-written"], (name, target)
    for target in ("anthropic", "openai-chat"):
        result = run_chatconv("export", tmp_path / "result.jsonl", "--to", target)
        assert result.returncode == 1 and result.stdout == b"", result.stderr_text
        assert result.stderr_text == (f"{tmp_path / 'result.jsonl'}:1:1: error: $: not exported: it nests deeper than "
                                      "the 255 levels chatconv writes (flatten the value: chatconv writes JSON at "
                                      "most 255 levels deep)\n1 step read: 0 bodies written\n")


def test_output_onto_a_file_read_is_refused_before_anything_is_read(tmp_path):
    # `import X -o X` replaced X with what was made of it, and a record left out with an error was gone.
    finetune = (DATA / "openai-chat" / "finetune.jsonl").read_bytes()
    runs = tmp_path / "runs"
    runs.mkdir()
    source = runs / "train.jsonl"
    source.write_bytes(finetune + b'{"messages": [{"role": "tool", "content": "an orphan result"}]}\n')
    os.link(source, tmp_path / "linked.jsonl")
    refused = [("import", source, source), ("import", runs, source), ("import", source, tmp_path / "linked.jsonl"),
               ("export", source, source), ("export", runs, source)]
    for command, path, output in refused:
        extra = ["--to", "openai-chat"] if command == "export" else []
        result = run_chatconv(command, path, *extra, "-o", output)
        assert result.returncode == 2, (command, path, result.stderr_text)
        assert f"-o {output}" in result.stderr_text and "write to another file" in result.stderr_text
        assert "read (" not in result.stderr_text  # nothing was read
    assert source.read_bytes().startswith(finetune) and source.read_bytes().count(b"\n") == finetune.count(b"\n") + 1
    # A new file in the folder read, or a file of another kind there, is written as asked.
    expected = run_chatconv("import", runs).stdout
    assert expected.count(b"\n") == 6
    for output in (runs / "steps.jsonl", runs / "notes.txt"):
        result = run_chatconv("import", runs, "-o", output)
        assert result.returncode == 1 and output.read_bytes() == expected, result.stderr_text
        if output.suffix == ".jsonl":
            output.unlink()
    assert run_chatconv("import", runs, "-o", runs / "notes.txt").returncode == 1  # it exists; still not read


def test_import_of_call_arguments_nested_deeper_than_chatconv_writes_is_a_problem_not_a_traceback(tmp_path):
    # orjson reads 1024 levels and writes 255: the quick ways raised on writing them back.
    arguments = json.dumps({"x": json.loads("[" * 300 + "]" * 300)})
    body = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}]}]}
    row = {"conversations": [{"from": "human", "value": "hi"},
                             {"from": "function_call", "value": json.dumps({"name": "f", "arguments": json.loads(arguments)})}]}
    (tmp_path / "body.jsonl").write_text(json.dumps(body) + "\n")
    (tmp_path / "row.jsonl").write_text(json.dumps(row) + "\n")
    kept = run_chatconv("import", tmp_path / "body.jsonl")
    assert kept.returncode == 0 and "arguments-inexact" not in kept.stdout_text
    assert "tool call arguments nest deeper than the 255 levels chatconv writes: kept as a string input" \
        in kept.stderr_text
    [step] = [json.loads(line) for line in kept.stdout_text.splitlines()]
    assert step["output"][0]["content"][0]["input"] == arguments  # the text, as it was
    refused = run_chatconv("import", tmp_path / "row.jsonl")
    assert refused.returncode == 1 and refused.stdout_text == ""
    assert "$.conversations[1].value: a function_call value that chatconv cannot write back: it nests deeper" \
        in refused.stderr_text
