"""text, tools and dataset with worker processes: the same bytes and problems whatever --jobs, tool
calls paired across batches, and tools' memory bound (--max-memory) in bytes, not conversations."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from chatconv.recordings import ToolRows, iter_step_rows, tool_row_lines, tool_rows
from chatconv.recordings.tool_events import tool_facts
from chatconv.sources import load_json
from conftest import write_jsonl

SMALL = 600  # bytes a batch: a few lines each, so a file of a few kilobytes is many batches


def _step(conversation, index, calls=(), results=(), text="ok", args=None):
    output = []
    if results:
        output.append({"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": r, "toolName": "look",
             "output": {"type": "error-text" if r.endswith("!") else "json", "value": {"r": r}}} for r in results]})
    if calls:
        output.append({"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": c, "toolName": "look", "input": args or {"q": c}} for c in calls]})
    output.append({"role": "assistant", "content": [{"type": "text", "text": text}]})
    step = {"stepIndex": index, "input": {"role": "user", "content": f"turn {index}"}, "output": output}
    return step if conversation is None else {"conversationId": conversation, **step}


def _run(command, path, jobs, batch_bytes, **options):
    problems, unreadable = [], []
    if command == "tools":
        out = b"".join(tool_row_lines([str(path)], problems=problems, unreadable=unreadable, jobs=jobs,
                                      batch_bytes=batch_bytes, **options))
    else:
        out = b"".join(iter_step_rows([str(path)], command, problems=problems, unreadable=unreadable, jobs=jobs,
                                      batch_bytes=batch_bytes, **options))
    return out, [(p.line, p.column, p.path, p.message, p.code) for p in problems]


def _awkward_file(tmp_path):
    """Interleaved conversations, calls answered several lines later, a broken line, an invalid
    step, a step without conversationId, repeated ids and an orphan: more than a batch."""
    steps = []
    for turn in range(30):
        for conversation in ("a", "b", "c"):
            calls = [f"{conversation}{turn}"]
            results = [f"{conversation}{turn - 2}"] if turn >= 2 and turn % 5 else []
            steps.append(_step(conversation, turn, calls, results, text=f"{conversation} says {turn}"))
    steps.insert(10, _step(None, 0, ["n1"], text="no id"))
    steps.insert(20, _step("a", 99, ["a5"], ["zz"]))  # a repeated id and a result for no call
    path = write_jsonl(tmp_path / "awkward.jsonl", steps)
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(15, b'{"conversationId": "a", "stepIndex": \n')  # broken JSON
    lines.insert(40, b'{"conversationId": "b", "stepIndex": "x", "input": 1, "output": []}\n')  # invalid
    path.write_bytes(b"".join(lines))
    return path


@pytest.mark.parametrize("command", ["text", "dataset", "tools"])
@pytest.mark.parametrize("output_format", ["jsonl", "table"])
def test_same_bytes_and_problems_for_any_number_of_workers(tmp_path, command, output_format):
    path = _awkward_file(tmp_path)
    assert path.stat().st_size > 20 * SMALL
    one = _run(command, path, 1, 1 << 20, output_format=output_format)
    assert one[0] and one[1]  # rows, and the file's problems
    assert _run(command, path, 1, SMALL, output_format=output_format) == one
    assert _run(command, path, 2, SMALL, output_format=output_format) == one


def test_the_cli_gives_the_same_output_with_jobs(tmp_path):
    from conftest import run_chatconv

    path = _awkward_file(tmp_path)
    for command in ("text", "tools", "dataset"):
        one, two = run_chatconv(command, path, "--jobs", "1"), run_chatconv(command, path, "--jobs", "2")
        assert (one.returncode, one.stdout, one.stderr) == (two.returncode, two.stdout, two.stderr)
        assert one.returncode == 1


def test_calls_are_paired_across_batches(tmp_path):
    # Each line is a batch of its own: every call is answered in a batch after its own.
    steps = [_step("c", 0, ["k0"])] + [_step("c", i, [f"k{i}"], [f"k{i - 1}"]) for i in range(1, 8)]
    path = write_jsonl(tmp_path / "pairs.jsonl", steps)
    reported = []
    rows = list(tool_rows(path, problems=reported, jobs=2, batch_bytes=10))
    assert [(r["toolCallId"], r["stepIndex"], r["args"], r["result"], r["status"]) for r in rows] == \
        [(f"k{i}", i, {"q": f"k{i}"}, {"r": f"k{i}"}, "ok") for i in range(7)] + [("k7", 7, {"q": "k7"}, None,
                                                                                     "unanswered")]
    assert reported == []


def test_a_repeated_id_and_an_orphan_are_located_across_batches(tmp_path):
    steps = [_step("c", 0, ["x"]), _step("c", 1, ["x"]), _step("c", 2, [], ["y", "x", "x"])]
    path = write_jsonl(tmp_path / "dup.jsonl", steps)
    for jobs in (1, 2):
        reported = []
        rows = list(tool_rows(path, problems=reported, jobs=jobs, batch_bytes=10))
        assert [(r["stepIndex"], r["status"]) for r in rows] == [(0, "unanswered"), (1, "ok")]
        assert [(p.line, p.path, p.code) for p in reported] == [
            (2, "$.output[0].content[0].toolCallId", "duplicate-tool-call-id"),
            (3, "$.output[0].content[0].toolCallId", "tool-result-orphan")]


def test_past_max_memory_the_oldest_conversations_are_finished_early(tmp_path):
    # 40 conversations each with a call waiting; the cap holds only a few of them.
    steps = [_step(f"conv{i}", 0, [f"call{i}"]) for i in range(40)]
    steps += [_step("conv0", 1, [], ["call0"])]  # its call was written unanswered already
    path = write_jsonl(tmp_path / "wide.jsonl", steps)
    reported = []
    rows = list(tool_rows(path, problems=reported, max_memory=8_000))
    assert len(rows) == 40 and {r["status"] for r in rows} == {"unanswered"}
    assert rows[0]["toolCallId"] == "call0"  # the least recently active first
    early = [p for p in reported if p.code == "memory-cap"]
    assert early and all(p.severity == "warning" for p in early)
    assert "'conv0'" in early[0].message and "--max-memory" in early[0].message
    assert reported[-1].code == "tool-result-orphan" and reported[-1].line == 41
    # With room enough, conv0's call is answered, as validate pairs it.
    rows = list(tool_rows(path, problems=(roomy := [])))
    assert [r["status"] for r in rows if r["toolCallId"] == "call0"] == ["ok"] and roomy == []


def _held_after_one_waiting_call(args):
    record = load_json(orjson.dumps(_step("c", 0, ["big"], args=args)), "f.jsonl", 1)
    rows = ToolRows("f.jsonl", None, "jsonl")
    assert list(rows.add(None, tool_facts([(record, 0)], (None, "jsonl"))[0])) == []  # waiting for its result
    return rows.held


def test_a_waiting_call_holds_no_arguments():
    small = _held_after_one_waiting_call({"q": "x"})
    big = _held_after_one_waiting_call({"q": "x" * 1_000_000, "more": list(range(10_000))})
    assert big == small


def test_a_waiting_call_read_from_a_file_gets_its_arguments_back(tmp_path):
    args = {"q": "x" * 50_000, "n": [1, 2.5, None]}
    path = write_jsonl(tmp_path / "later.jsonl", [_step("c", 0, ["big"], args=args), _step("c", 1, [], ["big"])])
    [row] = tool_rows(path, jobs=2, batch_bytes=10)
    assert row["args"] == args and row["status"] == "ok"


_conversation = st.sampled_from(["a", "b", "c", None])


@st.composite
def _recordings(draw):
    """Steps of a few interleaved conversations, calls answered (or not, or twice) some lines later."""
    steps, waiting, counts = [], {}, {}
    for number in range(draw(st.integers(1, 40))):
        conversation = draw(_conversation)
        open_calls = waiting.setdefault(conversation, [])
        results = [open_calls.pop(0) for _ in range(min(len(open_calls), draw(st.integers(0, 2))))]
        if draw(st.booleans()) and number:
            results.append(draw(st.sampled_from(["ghost", "x0-0", "a1-0"])))
        calls = [f"x{number}-{k}" for k in range(draw(st.integers(0, 2)))]
        if draw(st.integers(0, 9)) == 0 and results:
            calls.append(results[0])  # an id used again
        open_calls += calls
        index = counts[conversation] = counts.get(conversation, -1) + 1
        steps.append(_step(conversation, index, calls, results, text="t" * draw(st.integers(0, 300))))
    return steps


@settings(max_examples=8, deadline=None,  # each starts worker pools: 15 took 18 s of CI's 10 minutes
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=_recordings(), batch=st.integers(50, 2_000))
def test_any_recording_gives_the_same_rows_and_problems_with_workers(tmp_path, steps, batch):
    path = write_jsonl(tmp_path / "any.jsonl", steps)
    for command in ("tools", "dataset"):
        assert _run(command, path, 2, batch) == _run(command, path, 1, 1 << 20)


def test_max_memory_takes_a_size_with_its_unit(tmp_path):
    from conftest import run_chatconv

    steps = [_step(f"conv{i}", 0, [f"call{i}"]) for i in range(30)]
    path = write_jsonl(tmp_path / "wide.jsonl", steps)
    capped = run_chatconv("tools", path, "--max-memory", "6KiB")
    assert capped.returncode == 0 and "memory-cap" not in capped.stdout_text
    assert "warning" in capped.stderr_text and "--max-memory (6144 bytes) reached" in capped.stderr_text
    assert run_chatconv("tools", path, "--max-memory", "1GiB").stderr_text.count("warning") == 0
    for value in ("lots", "inf", "1e400GB"):
        wrong = run_chatconv("tools", path, "--max-memory", value)  # run_chatconv fails on a traceback
        assert wrong.returncode == 2 and f"{value!r} is not a size" in wrong.stderr_text


def _tool_parts_walked(step: dict, path: tuple) -> list:
    """The tool parts of a step as its messages read them, one by one (what step_tool_parts
    reads without generators)."""
    from chatconv.messages import iter_step_messages, message_parts

    return [(path + message_path + ("content", index), part)
            for message_path, message in iter_step_messages(step)
            for index, part in enumerate(message_parts(message))
            if isinstance(part, dict) and part.get("type") in ("tool-call", "tool-result")]


def test_the_tool_parts_of_the_recordings_are_those_their_messages_hold(tmp_path):
    from chatconv.recordings import iter_recording_steps, tool_parts
    from conftest import recorded_files

    found = 0
    for path in [*recorded_files(), _awkward_file(tmp_path)]:
        for item in iter_recording_steps(path, problems=[]):
            assert tool_parts(item) == _tool_parts_walked(item.step, item.path)
            found += len(tool_parts(item))
    assert found > 100


_part = st.one_of(st.integers(), st.none(), st.fixed_dictionaries(
    {}, optional={"type": st.sampled_from(["text", "tool-call", "tool-result", "tool-other", 3]),
                  "toolCallId": st.text(max_size=2)}))
_parts_message = st.one_of(st.text(max_size=2), st.dictionaries(
    st.sampled_from(["role", "content"]), st.one_of(st.text(max_size=2), st.lists(_part, max_size=4)), max_size=2))


@given(step=st.dictionaries(st.sampled_from(["input", "output", "stepIndex"]),
                            st.one_of(_parts_message, st.lists(_parts_message, max_size=3)), max_size=3),
       path=st.sampled_from([(), ("steps", 2)]))
def test_step_tool_parts_finds_every_tool_part_in_order_whatever_the_shape(step, path):
    from chatconv.messages import step_tool_parts
    from chatconv.validate import tool_parts

    assert step_tool_parts(step, path) == _tool_parts_walked(step, path)
    if all(isinstance(part.get("toolCallId"), str) for _, part in step_tool_parts(step)):
        assert tool_parts(step, path) == tuple((part["type"] == "tool-call", part["toolCallId"], part_path)
                                               for part_path, part in _tool_parts_walked(step, path))


_content = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.one_of(
    st.integers(), st.fixed_dictionaries({"type": st.sampled_from(["text", "reasoning", "tool-call"])},
                                         optional={"text": st.one_of(st.text(max_size=5), st.integers())})),
    max_size=3))
_message = st.one_of(st.integers(), st.fixed_dictionaries({"role": st.just("assistant")}, optional={"content": _content}))


@given(output=st.one_of(st.lists(_message, max_size=4), _message.filter(lambda m: isinstance(m, dict))))
def test_step_text_is_the_text_of_the_normalized_output(output):
    from chatconv.messages import extract_text_from_messages, normalize_output
    from chatconv.recordings import step_text

    assert step_text({"output": output}) == extract_text_from_messages(normalize_output(output))


def test_a_batch_reads_its_lines_as_a_file_is_read(tmp_path):
    from chatconv.recordings.batches import batch_records
    from chatconv.sources import iter_records

    path = tmp_path / "cut.jsonl"
    path.write_bytes(b'{"a": tru\n\n  \n"abc\n\xef\xbb\xbf{"b": 1}\r\n{"conversationId": "a", "stepIndex": \n[1,')
    read = [(r.line, r.data, r.error) for r in iter_records(path)]
    data = path.read_bytes()
    batched = [(r.line, r.data, r.error) for r, _ in batch_records(str(path), 1, 0, data)]
    assert batched == read and len(read) == 5
    offsets = [at for _, at in batch_records(str(path), 1, 0, data)]
    assert [data[at:].split(b"\n")[0] for at in offsets] == [line for line in data.split(b"\n") if line.strip()]


def test_a_waiting_call_read_from_standard_input_keeps_its_arguments_not_its_record(tmp_path):
    from chatconv.sources import Record

    record = load_json(orjson.dumps(_step("c", 0, ["big"], args={"q": "x" * 1000}, text="t" * 100_000)), "-", 1)
    rows = ToolRows("-", None, "jsonl")
    assert list(rows.add(record, tool_facts([(record, None)], (None, "jsonl"))[0])) == []
    [waiting] = rows._window.drain()[0][1].open.values()
    assert waiting.where is None and not isinstance(waiting.where, Record)
    assert orjson.loads(waiting.args) == {"q": "x" * 1000}
    assert 1000 < rows.held < 5000  # its arguments, not the record's 100 KB of text


def test_tools_reads_standard_input_and_pairs_across_its_steps(tmp_path):
    from conftest import run_chatconv

    path = write_jsonl(tmp_path / "pairs.jsonl", [_step("c", 0, ["k0"]), _step("c", 1, [], ["k0"])])
    result = run_chatconv("tools", "-", stdin=path.read_bytes())
    [row] = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert (row["args"], row["result"], row["status"]) == ({"q": "k0"}, {"r": "k0"}, "ok")
