"""`chatconv import --jobs`: worker processes give the same lines and problems as one process,
conversations continued across records and batches included."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatconv.formats import ImportRun, import_chunks, import_records

DATA = Path(__file__).parent / "data" / "formats"


def _mixed_file(tmp_path: Path) -> Path:
    """Fine-tuning lines, a Responses tool loop (one conversation over several records), a bad
    line and a record that is no format, repeated so that conversations cross batches."""
    lines = ((DATA / "openai-chat" / "finetune.jsonl").read_bytes().splitlines()
             + (DATA / "openai-responses" / "tool-loop.jsonl").read_bytes().splitlines()
             + [b'{"hello": "world"}', b'{"messages": [', b""])
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines * 4) + b"\n")
    return path


def _imported(path: Path, jobs: int, batch_bytes: int) -> tuple[list[bytes], list, tuple]:
    run = ImportRun()
    lines = list(import_records([str(path)], run=run, jobs=jobs, batch_bytes=batch_bytes))
    return lines, run.problems, (run.records, run.conversations, run.steps, run.formats)


@pytest.mark.parametrize("batch_bytes", [300, 2000, 1 << 20])
def test_workers_give_the_same_lines_problems_and_counts_as_one_process(tmp_path, batch_bytes):
    path = _mixed_file(tmp_path)
    serial = _imported(path, 1, batch_bytes)
    assert serial[0] and serial[1]  # the file gives lines and problems both
    assert _imported(path, 2, batch_bytes) == serial
    assert _imported(path, 3, batch_bytes) == serial
    # What the command writes: chunks of whole lines, the same bytes whatever the workers.
    for jobs in (1, 2):
        chunks = list(import_chunks([str(path)], run=ImportRun(), jobs=jobs, batch_bytes=batch_bytes))
        assert all(chunk.endswith(b"\n") for chunk in chunks)
        assert b"".join(chunks) == b"".join(line + b"\n" for line in serial[0])


def test_a_conversation_continued_in_a_later_batch_numbers_its_steps_on(tmp_path):
    import orjson

    path = _mixed_file(tmp_path)
    lines, _, _ = _imported(path, 2, 300)
    by_conversation: dict = {}
    for line in lines:
        step = orjson.loads(line)
        by_conversation.setdefault(step["conversationId"], []).append(step["stepIndex"])
    # Every conversation's steps are numbered 0, 1, 2, ... whichever record and batch they came from.
    assert all(indexes == list(range(len(indexes))) for indexes in by_conversation.values())
    # The Responses tool loop, four times in the file, is one conversation whose steps run on.
    assert max(len(indexes) for cid, indexes in by_conversation.items() if cid.startswith("resp_")) == 8


def test_the_workers_are_started_once_for_every_file_of_a_run(tmp_path, monkeypatch):
    """Small compressed files with --jobs 2 go to workers each: the same workers, not a pool per file."""
    import gzip

    from chatconv import cluster, workers

    started = []

    class Counted(workers.OrderedPool):
        def __init__(self, *args, **kwargs):
            started.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(cluster, "OrderedPool", Counted)  # the pool cluster.ordered_pool makes
    for index in range(3):
        line = b'{"messages": [{"role": "user", "content": "hi %d"}]}\n' % index
        (tmp_path / f"f{index}.jsonl.gz").write_bytes(gzip.compress(line))
    assert _imported(tmp_path, 2, 1 << 20) == _imported(tmp_path, 1, 1 << 20)
    assert len(started) == 1


def test_a_file_of_one_record_conversations_is_never_read_again_by_the_main_process(tmp_path, monkeypatch):
    """Fine-tuning lines: each batch is taken whole from its worker, with the lines, counts and
    state one process gives; the main process reads none of its records itself."""
    from chatconv.formats import import_files

    path = tmp_path / "train.jsonl"
    path.write_bytes((DATA / "openai-chat" / "finetune.jsonl").read_bytes() * 20)
    serial = _imported(path, 1, 2000)
    read_here, taken_by_record = [], []
    monkeypatch.setattr(import_files, "_chunk_of", lambda importer, record: read_here.append(record) or iter(()))
    monkeypatch.setattr(import_files, "_taken", lambda *args: taken_by_record.append(args) or iter(()))
    assert _imported(path, 2, 2000) == serial
    assert read_here == [] and taken_by_record == []


@given(known=st.lists(st.text("abc", min_size=1, max_size=3), unique=True, max_size=6),
       new=st.lists(st.tuples(st.text("xyz", min_size=1, max_size=3),
                              st.none() | st.dictionaries(st.sampled_from(["c1", "c2"]), st.just("t")),
                              st.none() | st.integers(0, 3)), unique_by=lambda item: item[0], max_size=8))
def test_a_batch_taken_at_once_leaves_the_state_its_records_taken_in_turn_leave(known, new):
    from chatconv.formats import import_state

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(import_state, "CONVERSATION_WINDOW", 5)  # the window is crossed
        _compare_states(known, new)


def _compare_states(known: list, new: list) -> None:
    from chatconv.formats.import_files import _take
    from chatconv.formats.import_state import ImportState
    from chatconv.formats.importing import Importer

    at_once, in_turn = ImportState(), ImportState()
    for state in (at_once, in_turn):
        for conversation_id in known:
            state.add_names(conversation_id, {"k": "v"})
            state.set_next_step(conversation_id, 1)
    at_once.add_new({i: names for i, names, _ in new if names},  # (a state holds no empty names)
                    {i: step for i, _, step in new if step is not None})
    importer = Importer(run=ImportRun(), state=in_turn)
    for line, after in enumerate(new, 1):  # each a record's result, taken by the per-record path
        _take(importer, (line, 0, (after[0],), (after,), (1, 1, 1), (), []))
    assert list(at_once.names.items()) == list(in_turn.names.items())
    assert list(at_once.next_steps.items()) == list(in_turn.next_steps.items())
