"""Shared test helpers: the recorded fixtures, a repository folder, running the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, settings

from chatconv.messages import iter_step_messages, iter_steps, message_parts
from chatconv.migrate import rename_key

DATA = Path(__file__).parent / "data"
RECORDED = DATA / "recorded"
REPO = Path(__file__).parent.parent

# No test may depend on the machine being idle: hypothesis's per-example deadline (200 ms) and its
# too-slow health check time the examples, and a loaded machine fails them. Speed is the
# benchmarks' to check (benchmarks/), as ratios measured in one run.
settings.register_profile("chatconv", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("chatconv")


def recorded_files() -> list[Path]:
    return sorted(RECORDED.glob("*.jsonl"))


def read_jsonl(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def write_jsonl(path: Path, records) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def import_and_validate(tmp_path: Path, source: Path, **options) -> Path:
    """`source` imported into a step-per-line file, which chatconv validate must find free of errors."""
    from chatconv.formats import import_paths
    from chatconv.validate import validate_path
    records = import_paths([str(source)], **options)
    out = tmp_path / f"{source.name}.steps.jsonl"
    write_jsonl(out, records)
    found, summary = validate_path(out)
    assert summary.errors == 0, [p.format_text() for p in found]
    return out


def import_problems(source: Path, format_name: str | None = None) -> list:
    """The problems of importing `source`, which must give no record."""
    from chatconv.formats import import_paths
    problems: list = []
    assert import_paths([str(source)], format_name, problems=problems) == []
    return problems


def run_chatconv(*args, cwd=None, stdin: bytes | None = None, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run the CLI as a user does; bad input must never end in a traceback (nor outlast `timeout`
    seconds: subprocess.TimeoutExpired)."""
    result = subprocess.run([sys.executable, "-m", "chatconv", *map(str, args)], cwd=cwd,
                            input=stdin, capture_output=True, timeout=timeout)
    result.stdout_text = result.stdout.decode()
    result.stderr_text = result.stderr.decode()
    assert "Traceback" not in result.stderr_text, result.stderr_text
    return result


# Threads libraries leave in a test process for good, idle between their uses: Dask's offload
# executor, and fsspec's event loop and the executor that loop starts (test_objstore.py reads
# buckets in the test process).
_IDLE_LIBRARY_THREADS = ("Dask-Offload", "fsspecIO", "asyncio_")


def _threads_but_idle_library_threads(count=threading.active_count) -> int:
    return count() - sum(t.name.startswith(_IDLE_LIBRARY_THREADS) for t in threading.enumerate())


@pytest.fixture(autouse=True)
def _workers_start_as_when_the_test_runs_alone(monkeypatch):
    """Once a test has used Dask in a test process, distributed's offload executor keeps one idle
    thread ("Dask-Offload_0") there for good, and chatconv.workers (which forks only when its
    thread is the only one) then spawned every later test's worker pools: a second or more a pool,
    some tests start dozens (test_validate_problem_path's pairing test: 1.3 s alone, 26 s after a
    Dask test). That thread waits on its queue and no worker uses it, so it is not counted: each
    test starts its workers as it does run alone. Any other thread counts, a test's own and a
    running Dask cluster's included (test_validate_parallel checks the spawn rule itself).
    fsspec's event loop thread, once a test has read a bucket in-process, is left out alike."""
    if any(t.name.startswith(_IDLE_LIBRARY_THREADS) for t in threading.enumerate()):
        monkeypatch.setattr(threading, "active_count", _threads_but_idle_library_threads)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty repository folder (it holds .git, so it is the repository root)."""
    (tmp_path / ".git").mkdir()
    return tmp_path


# ---------------------------------------------------------------------------------------------
# Legacy versions of current records: the exact inverse of migrations 0001 and 0002


def _to_ai_sdk4(obj: dict) -> None:
    for new, old in (("mediaType", "mimeType"), ("providerOptions", "experimental_providerMetadata")):
        if new in obj and old not in obj:
            rename_key(obj, new, old)
    if obj.get("type") == "tool-call" and "input" in obj and "args" not in obj:
        rename_key(obj, "input", "args")
    output = obj.get("output")
    # Only an output that 0002 would build back the same: {type, value}, text for a string.
    if (obj.get("type") == "tool-result" and "result" not in obj and "isError" not in obj
            and isinstance(output, dict) and list(output) == ["type", "value"]
            and output["type"] in ("text", "json", "error-text", "error-json")
            and isinstance(output["value"], str) == output["type"].endswith("text")):
        rename_key(obj, "output", "result", output["value"])
        if output["type"].startswith("error-"):
            obj["isError"] = True


def to_legacy(record: dict) -> dict:
    """The record as older writers wrote it: a one-message output as that message (0001), and
    AI SDK 4 parts (0002: input->args, output->result (+isError), mediaType->mimeType,
    providerOptions->experimental_providerMetadata), each key renamed where it stands."""
    for _, step in iter_steps(record):
        for _, message in iter_step_messages(step):
            if isinstance(message, dict):
                _to_ai_sdk4(message)
                for part in message_parts(message):
                    if isinstance(part, dict):
                        _to_ai_sdk4(part)
        if isinstance(step.get("output"), list) and len(step["output"]) == 1:
            step["output"] = step["output"][0]
    return record


def legacy_bytes(data: bytes) -> bytes:
    """A JSONL file's bytes with every record made legacy; each line keeps its ending."""
    lines = data.splitlines(keepends=True)
    return b"".join(orjson.dumps(to_legacy(orjson.loads(line))) + line[len(line.rstrip(b"\r\n")):]
                    for line in lines)


def round_trip(tmp_path: Path, records: list, format_name: str, forced: bool = False) -> list:
    """`records` of a format imported (`forced`: as --from that format, else as detected), then
    exported to that format again (a row per conversation): the records as export writes them.
    No error may be found on the way."""
    from chatconv.formats import ExportRun, export_bodies, import_paths
    rows = write_jsonl(tmp_path / "rows.jsonl", records)
    steps = write_jsonl(tmp_path / "steps.jsonl", import_paths([str(rows)], format_name if forced else None))
    run = ExportRun()
    back = [orjson.loads(body) for body in export_bodies([str(steps)], format_name, "conversation", run=run)]
    assert [p for p in run.problems if p.is_error] == []
    return back


def json_leaves(value, into: set | None = None) -> set:
    """Every key, string and number in a JSON value (and in JSON text its strings hold): what an
    import that loses nothing must still hold somewhere."""
    into = set() if into is None else into
    if isinstance(value, dict):
        for key, item in value.items():
            into.add(("s", key))
            json_leaves(item, into)
    elif isinstance(value, list):
        for item in value:
            json_leaves(item, into)
    elif isinstance(value, str):
        try:  # JSON text (a call's arguments) counts by what it holds, which a reader may parse
            parsed = orjson.loads(value) if value[:1] in ("{", "[") else None
        except orjson.JSONDecodeError:
            parsed = None
        if parsed is None:
            into.add(("s", value))
        else:
            json_leaves(parsed, into)
    elif not isinstance(value, bool) and value is not None:
        into.add(("n", value))
    return into


def assert_nothing_lost(source, steps: list[dict], vocabulary: tuple[str, ...] = ()) -> None:
    """Every key, string and number of `source` is somewhere in the imported steps, but for the
    format's own `vocabulary` (its type names and keys, read into the model messages' own)."""
    missing = json_leaves(source) - json_leaves(steps) - {("s", word) for word in vocabulary}
    assert not missing, sorted(missing, key=str)[:10]


def exported(steps: Path, format_name: str, per: str = "conversation") -> tuple[list, object]:
    """What `chatconv export --to format_name` writes of a steps file (JSON values), and its run."""
    from chatconv.formats import ExportRun, export_bodies
    run = ExportRun()
    return [orjson.loads(body) for body in export_bodies([str(steps)], format_name, per, run=run)], run


def imported_lines(lines: list[bytes], quick: bool, file: str = "rows.jsonl") -> tuple:
    """What the importer makes of JSONL `lines` (lines, counts, formats, problems, next steps),
    the quick paths allowed or not: a property test holds the two equal."""
    import io

    from chatconv.formats.importing import Importer
    from chatconv.sources import iter_jsonl
    importer = Importer()
    importer.quick = quick
    out = [line for record in iter_jsonl(io.BytesIO(b"\n".join(lines) + b"\n"), file, 1)
           for line in importer.lines_of(record)]
    run = importer.run
    return out, (run.records, run.conversations, run.steps), run.formats, run.problems, list(importer.state.next_steps.items())


def real_file_back(tmp_path: Path, source: Path, format_name: str, forced: bool = False,
                   one_record: bool = False) -> tuple[list, list]:
    """A real file of a format (its records as written, each as `json.dumps` gives it: key order
    counts) and what import then export to that format gives of it, which leaves nothing out.
    `one_record`: the file is one record even when it is a JSON array (a history, a list of UI
    messages); `forced`: imported as --from the format."""
    steps = import_and_validate(tmp_path, source, **({"format_name": format_name} if forced else {}))
    back, run = exported(steps, format_name)
    assert [p for p in run.problems] == []
    text = source.read_text(encoding="utf-8")
    if source.suffix == ".jsonl":
        records = [orjson.loads(line) for line in text.splitlines() if line.strip()]
    else:
        value = orjson.loads(text)
        records = value if isinstance(value, list) and not one_record else [value]
    return [json.dumps(r) for r in records], [json.dumps(r) for r in back]
