"""The inspect format: inspect_ai eval logs (.json, and .eval zips of them) imported, each sample
a conversation.

The fixture follows inspect_ai's published log format: https://inspect.aisi.org.uk/eval-logs.html
and https://inspect.aisi.org.uk/reference/inspect_ai.log.html (EvalLog, EvalSample), with the
ChatMessage and Content types of https://inspect.aisi.org.uk/reference/inspect_ai.model.html.
"""

from __future__ import annotations

import copy
import json
import tempfile
import zipfile
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.formats import FORMATS, IMPORTED, import_paths, read
from chatconv.formats.inspect_log import archive as inspect_archive
from chatconv.messages import conversation_messages, extract_tool_calls_from_messages
from conftest import run_chatconv

DATA = Path(__file__).parent / "data" / "formats" / "inspect"
LOG = json.loads((DATA / "ctf_log.json").read_text())
RUN = LOG["eval"]["run_id"]


def _eval_file(path: Path, log: dict = LOG, header: bool = True, extra: dict | None = None) -> Path:
    """A .eval log as inspect writes it: header.json, a sample entry each, and the derived entries."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": log["eval"], "plan": log["plan"]}))
        for sample in log["samples"]:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample, indent=2))
        archive.writestr("summaries.json", json.dumps([{"id": s["id"], "epoch": s["epoch"]} for s in log["samples"]]))
        if header:
            archive.writestr("header.json", json.dumps({k: v for k, v in log.items() if k != "samples"}, indent=2))
        for name, text in (extra or {}).items():
            archive.writestr(name, text)
    return path


def _detected(data) -> list[str]:
    return [fmt.NAME for fmt in FORMATS if fmt.detect(data)]


def test_a_log_and_a_sample_are_inspect_and_a_plain_openai_body_is_not():
    assert _detected(LOG) == ["inspect"]
    # A sample alone (a .eval entry) has `input` and `output`, as chatconv's own steps do: of the
    # formats import tries, inspect is the one that takes it.
    assert [fmt.NAME for fmt in IMPORTED if fmt.detect(LOG["samples"][0])] == ["inspect"]
    assert _detected({"version": 2, "status": "error", "eval": {"run_id": "r"}}) == ["inspect"]  # header only
    assert _detected({"messages": [{"role": "user", "content": "hi"}]}) == ["openai-chat"]
    assert _detected({"eval": "not an object", "samples": []}) == []


def test_each_sample_is_a_conversation_named_after_the_run_the_sample_and_its_epoch():
    first, second = read(DATA / "ctf_log.json")
    assert [first.id, second.id] == [f"{RUN}/ctf-1/1", f"{RUN}/2/1"]
    # The log's header once, on the first conversation; the other names where it is.
    assert first.metadata["log"] == {k: v for k, v in LOG.items() if k != "samples"}
    assert "log" not in second.metadata and second.metadata["logHeaderIn"] == first.id
    # The sample's own fields, by their own names; its messages are the conversation.
    sample = LOG["samples"][0]
    assert {k: first.metadata[k] for k in sample if k != "messages"} == {k: v for k, v in sample.items() if k != "messages"}
    assert [m["role"] for m in first.messages] == [m["role"] for m in sample["messages"]]


def test_text_reasoning_tool_calls_results_and_a_tool_error():
    messages = read(DATA / "ctf_log.json")[0].messages
    system, user, assistant, tool, calling, failed, answer, follow_up, last = messages
    assert system == {"role": "system", "content": "You are a CTF player.",
                      "providerOptions": {"inspect": {"id": "m1", "source": "input"}}}
    reasoning, text, call = assistant["content"]
    assert reasoning == {"type": "reasoning", "text": "I should read the file first.",
                         "providerOptions": {"inspect": {"signature": "EqQBCkYIAxgCIkB3Zl9", "redacted": False}}}
    assert text == {"type": "text", "text": "Let me look at the file."}
    assert call["toolName"] == "bash" and call["input"] == {"cmd": "cat /challenge/notes.txt"}
    assert assistant["providerOptions"]["inspect"]["model"] == "claude-3-7-sonnet-20250219"
    # The attachment the tool message refers to is its text.
    [result] = tool["content"]
    assert result["toolName"] == "bash" and result["output"]["value"].startswith("Meeting notes")
    assert calling["content"][0]["toolName"] == "python" and calling["providerOptions"]["inspect"]["content"] == ""
    [error] = failed["content"]
    assert error["output"] == {"type": "error-text", "value": "Command timed out before completing."}
    assert error["providerOptions"]["inspect"] == {"error": {"type": "timeout"}}
    assert follow_up["content"] == "How did you find it?" and last["content"][0]["text"].startswith("It was")


def test_media_parts_server_tool_use_redacted_reasoning_and_data_parts():
    user, assistant = read(DATA / "ctf_log.json")[1].messages
    text, image, audio, video, document = user["content"]
    assert image["image"].startswith("data:image/png") and image["providerOptions"]["inspect"] == {"detail": "low"}
    assert (audio["type"], audio["mediaType"]) == ("file", "audio/wav")
    assert (video["data"], video["mediaType"]) == ("clips/cat.mp4", "video/mp4")
    assert (document["mediaType"], document["filename"]) == ("application/pdf", "cat-facts.pdf")
    redacted, call, result, answer = assistant["content"]
    assert redacted["text"] == "" and redacted["providerOptions"]["inspect"]["reasoning"] == "gAAAAABn0x8redactedpayload"
    assert call["providerExecuted"] is True and call["input"] == {"query": "cat breeds orange"}
    assert result["output"] == {"type": "text", "value": "Orange tabby cats are common."}
    assert answer == {"type": "text", "text": "It is a cat, and the recording is silence."}
    # A data part (a model's internal payload) is kept on its message, with its place.
    [data] = assistant["providerOptions"]["inspect"]["dataParts"]
    assert data == {"index": 3, "type": "data", "data": {"encrypted_content": "gAAAAABn0x9", "id": "rs_67d4"}}


def test_the_cli_writes_valid_steps_and_pairs_every_call(tmp_path):
    out = tmp_path / "steps.jsonl"
    imported = run_chatconv("import", DATA / "ctf_log.json", "-o", out)
    assert imported.returncode == 0, imported.stderr_text
    assert "2 conversations, 4 steps written" in imported.stderr_text
    validated = run_chatconv("validate", out)
    assert validated.returncode == 0 and "0 errors" in validated.stderr_text + validated.stdout_text
    tools = [json.loads(line) for line in run_chatconv("tools", out).stdout_text.splitlines()]
    assert [(t["toolCallId"], t["status"]) for t in tools] == [("toolu_01A", "ok"), ("toolu_01B", "error"),
                                                               ("ws_67d4", "ok")]


def test_an_eval_zip_gives_the_same_conversations_as_the_json_log(tmp_path):
    log = _eval_file(tmp_path / "2025-03-14_intercode-ctf.eval")
    from_zip, from_json = read(log), read(DATA / "ctf_log.json")
    assert [c.id for c in from_zip] == [c.id for c in from_json]
    assert [c.messages for c in from_zip] == [c.messages for c in from_json]
    assert [c.metadata for c in from_zip] == [c.metadata for c in from_json]


def test_eval_files_are_found_in_folders_and_a_zip_under_another_name_by_its_entries(tmp_path):
    (tmp_path / "logs").mkdir()
    _eval_file(tmp_path / "logs" / "run.eval")
    renamed = _eval_file(tmp_path / "run-copy.zip")
    assert inspect_archive.claims(str(renamed)) and not inspect_archive.claims(str(DATA / "ctf_log.json"))
    records = import_paths([tmp_path / "logs"])
    assert len(records) == 4 and records[0]["conversationId"] == f"{RUN}/ctf-1/1"
    assert len(import_paths([renamed], "inspect")) == 4


def test_samples_are_read_one_at_a_time(tmp_path, monkeypatch):
    log = _eval_file(tmp_path / "run.eval")
    read_entries = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda self, name, *a, **k: read_entries.append(name)
                        or real_open(self, name, *a, **k))
    records = inspect_archive.records(str(log))
    first = next(records)
    assert first.file.endswith("run.eval!samples/ctf-1_epoch_1.json") and first.data["id"] == "ctf-1"
    assert [name for name in read_entries if name.startswith("samples/")] == ["samples/ctf-1_epoch_1.json"]
    records.close()


@pytest.mark.parametrize("content, message", [
    (b"not a zip at all", "not a readable zip archive"),
    (None, "not a readable zip archive"),  # a real log, cut in half
])
def test_a_damaged_eval_file_is_a_clear_problem(tmp_path, content, message):
    path = tmp_path / "run.eval"
    if content is None:
        whole = _eval_file(tmp_path / "whole.eval").read_bytes()
        content = whole[: len(whole) // 2]
    path.write_bytes(content)
    result = run_chatconv("import", path)
    assert result.returncode == 1
    assert f"{path}:1:1: error: $: {message}" in result.stderr_text


def test_bad_json_in_an_entry_names_the_entry_and_the_other_samples_are_read(tmp_path):
    path = _eval_file(tmp_path / "run.eval", extra={"samples/9_epoch_1.json": '{"id": 9, "epoch": 1, "messages": ['})
    result = run_chatconv("import", path)
    assert result.returncode == 1
    assert f"{path}!samples/9_epoch_1.json:1:" in result.stderr_text and "invalid JSON" in result.stderr_text
    assert "2 conversations" in result.stderr_text


def test_a_log_without_header_or_samples_is_told(tmp_path):
    no_header = tmp_path / "no-header.eval"
    with zipfile.ZipFile(no_header, "w") as archive:
        archive.writestr("samples/ctf-1_epoch_1.json", json.dumps(LOG["samples"][0]))
    problems: list = []
    [conversation] = read(no_header, problems=problems)
    assert conversation.id == "no-header.eval/ctf-1/1"
    assert [p.code for p in problems] == ["bad-archive"] and problems[0].severity == "warning"
    header_only = tmp_path / "started.eval"
    with zipfile.ZipFile(header_only, "w") as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "status": "started", "eval": LOG["eval"]}))
    result = run_chatconv("import", header_only)
    assert result.returncode == 0 and "no samples/ entry" in result.stderr_text


def _log_with(message: dict) -> dict:
    log = copy.deepcopy(LOG)
    log["samples"][0]["messages"].append(message)
    return log


@pytest.mark.parametrize("message, path, words", [
    ({"role": "tool", "function": "bash", "content": "x"}, "$.samples[0].messages[9].tool_call_id", "tool_call_id"),
    ({"role": "user", "content": [{"type": "hologram", "hologram": "x"}]}, "$.samples[0].messages[9].content[0]",
     "part of type 'hologram'"),
    ({"role": "user", "content": 42}, "$.samples[0].messages[9].content", "string or a list"),
    ({"role": "human", "content": "hi"}, "$.samples[0].messages[9].role", "role must be one of"),
    ({"role": "assistant", "content": "", "tool_calls": [{"id": "c", "arguments": {}}]},
     "$.samples[0].messages[9].tool_calls[0]", "id and function"),
    ({"role": "user", "content": [{"type": "reasoning", "reasoning": "x"}]}, "$.samples[0].messages[9].content[0]",
     "part of type 'reasoning'"),
    # A tool error that answers no call of the sample: named by its function, still an orphan
    # (validate refuses it), not written for validate to find.
    ({"role": "tool", "tool_call_id": "toolu_never", "function": "bash", "content": "",
      "error": {"type": "timeout", "message": "timed out"}}, "$.samples[0].messages[9]",
     "tool result 'toolu_never' answers no earlier tool call"),
])
def test_bad_messages_leave_their_sample_out_with_the_json_path(tmp_path, message, path, words):
    file = tmp_path / "log.json"
    file.write_bytes(orjson.dumps(_log_with(message), option=orjson.OPT_INDENT_2))
    result = run_chatconv("import", file)
    assert result.returncode == 1
    [error] = [line for line in result.stderr_text.splitlines() if ": error: " in line]
    assert f": error: {path}: " in error and words in error
    assert "1 conversation, 1 step written" in result.stderr_text  # the other sample is written
    # The header then goes with the first conversation written.
    [written] = [json.loads(line) for line in result.stdout_text.splitlines()]
    assert written["metadata"]["inspect"]["log"]["eval"]["run_id"] == RUN


def test_a_truncated_json_log_is_invalid_json_not_a_traceback(tmp_path):
    file = tmp_path / "log.json"
    file.write_text((DATA / "ctf_log.json").read_text()[:900])
    result = run_chatconv("import", file, "--from", "inspect")
    assert result.returncode == 1 and "invalid JSON" in result.stderr_text


texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
turns = st.lists(st.tuples(texts, st.lists(st.dictionaries(st.sampled_from("abc"), st.integers(-2**63, 2**63 - 1)), max_size=2),
                           texts), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(turns)
def test_order_texts_and_calls_are_kept(conversation):
    """Generated samples (user turns, tool calls answered, answers): every text, call and result
    comes out in order, every call paired with its result."""
    messages, calls = [], 0
    for question, arguments, answer in conversation:
        messages.append({"role": "user", "content": question})
        if arguments:
            ids = [f"call_{calls + n}" for n in range(len(arguments))]
            calls += len(arguments)
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": i, "function": "f", "arguments": a, "type": "function"} for i, a in zip(ids, arguments)]})
            messages += [{"role": "tool", "tool_call_id": i, "function": "f", "content": str(a)}
                         for i, a in zip(ids, arguments)]
        messages.append({"role": "assistant", "content": answer})
    log = {"version": 2, "status": "success", "eval": {"run_id": "r"},
           "samples": [{"id": 1, "epoch": 1, "input": "", "target": "", "messages": messages}]}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.json"
        path.write_bytes(orjson.dumps(log))
        steps = import_paths([path])
    imported = conversation_messages(steps)
    assert [m["role"] for m in imported] == [m["role"] for m in messages]
    assert [c["args"] for c in extract_tool_calls_from_messages(imported)] == [
        call["arguments"] for m in messages for call in m.get("tool_calls", [])]
    for original, message in zip(messages, imported):
        if original["role"] == "tool":
            assert message["content"][0]["output"]["value"] == original["content"]
        elif isinstance(original["content"], str) and original["content"]:
            assert message["content"] in (original["content"], [{"type": "text", "text": original["content"]}])


def test_an_entry_that_inflates_past_max_file_bytes_is_refused_as_it_inflates(tmp_path):
    # A small archive whose sample (or header) inflates to far more than it states or than memory
    # allows was read whole: the limit is found while inflating, the other samples are read.
    import resource
    import subprocess
    import sys

    log = tmp_path / "bomb.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", b'{"eval": {"run_id": "r"}, "pad": "' + b"h" * (3 << 20) + b'"}')
        with archive.open("samples/1_epoch_1.json", "w") as sample:
            sample.write(b'{"id": 1, "epoch": 1, "messages": [], "pad": "')
            for _ in range(64):
                sample.write(b"a" * (1 << 20))
            sample.write(b'"}')
        archive.writestr("samples/2_epoch_1.json", json.dumps(
            {"id": 2, "epoch": 1, "messages": [{"role": "user", "content": "hi"}]}))
    assert log.stat().st_size < 200_000

    def capped():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))

    result = subprocess.run([sys.executable, "-m", "chatconv", "import", str(log), "--max-file-bytes", "1MiB"],
                            capture_output=True, text=True, timeout=60, preexec_fn=capped)
    assert "Traceback" not in result.stderr and result.returncode == 1, result.stderr
    assert f"{log}!samples/1_epoch_1.json:1:1: error: $: the file is larger than 1 MiB (--max-file-bytes)" \
        in result.stderr
    assert f"{log}!header.json:1:1: warning: $: the file is larger than 1 MiB" in result.stderr
    [step] = [json.loads(line) for line in result.stdout.splitlines()]  # the other sample is read
    assert step["input"]["content"] == "hi"
