"""export with worker processes: the same bodies and problems whatever --jobs, for conversations
that cross batches, start again after leaving the window, or cannot be exported."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from chatconv.formats import ExportRun, export_bodies
from conftest import RECORDED, run_chatconv, write_jsonl


def _step(conversation, index, text, orphan=False, output=True):
    out = [{"role": "assistant", "content": f"{text}!"}] if output else []
    if orphan:  # a tool result with no call: the openai-chat body is refused
        out.insert(0, {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "z", "toolName": "t",
                                                    "output": {"type": "text", "value": "v"}}]})
    return {"conversationId": conversation, "stepIndex": index, "input": {"role": "user", "content": f"{text}?"},
            "output": out}


def _export(path, per, jobs, batch_bytes):
    run = ExportRun()
    bodies = list(export_bodies([str(path)], "openai-chat", per, run=run, jobs=jobs, batch_bytes=batch_bytes))
    return bodies, [(p.line, p.path, p.message) for p in run.problems], run.steps, run.bodies


def _mixed(tmp_path):
    steps, counts = [], {}
    for number in range(60):
        conversation = "abcde"[(number * 7) % 5] if number % 9 else "long"
        index = counts[conversation] = counts.get(conversation, -1) + 1
        steps.append(_step(conversation, index, f"{conversation}{index}", orphan=number == 31, output=number % 11 != 4))
    path = write_jsonl(tmp_path / "mixed.jsonl", steps)
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(20, b"{not json\n")
    lines += RECORDED.joinpath("weather-steps.jsonl").read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines))
    return path


@pytest.mark.parametrize("per", ["step", "conversation"])
def test_export_gives_the_same_bodies_and_problems_with_workers(tmp_path, per):
    path = _mixed(tmp_path)
    one = _export(path, per, 1, 1 << 20)
    assert one[0] and one[1]
    for batch_bytes in (200, 900, 5000):
        assert _export(path, per, 2, batch_bytes) == one
        assert _export(path, per, 1, batch_bytes) == one


def test_export_cli_with_jobs(tmp_path):
    path = _mixed(tmp_path)
    one = run_chatconv("export", str(path), "--to", "openai-chat", "--jobs", "1")
    two = run_chatconv("export", str(path), "--to", "openai-chat", "--jobs", "2")
    assert (one.returncode, one.stdout, one.stderr) == (two.returncode, two.stdout, two.stderr)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(order=st.lists(st.sampled_from("abc"), min_size=1, max_size=30), batch=st.integers(60, 1500),
       per=st.sampled_from(["step", "conversation"]))
def test_any_interleaving_exports_alike_with_workers(tmp_path, order, batch, per):
    counts = {}
    steps = []
    for conversation in order:
        index = counts[conversation] = counts.get(conversation, -1) + 1
        steps.append(_step(conversation, index, f"{conversation}{index}"))
    path = write_jsonl(tmp_path / "any.jsonl", steps)
    assert _export(path, per, 2, batch) == _export(path, per, 1, 1 << 20)
    bodies = [orjson.loads(body) for body in _export(path, per, 2, batch)[0]]
    assert len(bodies) == (len(steps) if per == "step" else len(counts))


@pytest.mark.parametrize("per", ["step", "conversation"])
def test_only_conversations_that_cross_a_batch_are_written_by_the_main_process(tmp_path, monkeypatch, per):
    from chatconv.formats import exporting

    steps = [_step(f"c{number // 3}", number % 3, f"t{number}") for number in range(60)]  # 20 of 3 steps
    path = write_jsonl(tmp_path / "runs.jsonl", steps)
    here = []
    original = exporting._FileExport._here
    monkeypatch.setattr(exporting._FileExport, "_here", lambda self, followed: here.append(followed) or original(
        self, followed))
    bodies, problems, _, _ = _export(path, per, 1, 1 << 20)  # one batch: the worker's bodies all taken
    assert here == [] and problems == [] and len(bodies) == (60 if per == "step" else 20)
    assert _export(path, per, 1, 1000)[0] == bodies  # 8 lines a batch: some conversations cross one
    crossing = {followed.places[0] for followed in here}
    assert 0 < len(crossing) < 20
