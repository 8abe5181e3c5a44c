"""Compressed recordings (.jsonl.gz, .jsonl.zst): read by every command as the plain file is,
found in folders, streamed; migrate writes them back compressed the same way; data cut short,
corrupt or of another kind is one clear problem (exit status 2)."""

from __future__ import annotations

import gzip
import io
import os
import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.formats.import_files import import_records
from chatconv.formats.importing import ImportRun
from chatconv.migrate.batches import Workers
from chatconv.migrate.files import migrate_file
from chatconv.problems import UnreadableInput
from chatconv.sources.compressed import DecompressedStream
from chatconv.sources import BATCH_BYTES, discover, iter_line_batches, iter_records, open_binary
from chatconv.validate import validate_path
from conftest import DATA, RECORDED, legacy_bytes, run_chatconv
from test_migrate import jsonl_lines

WEATHER = RECORDED / "weather-steps.jsonl"
FINETUNE = DATA / "formats" / "openai-chat" / "finetune.jsonl"
CLAUDE_CODE = DATA / "formats" / "claude-code" / "7f3c2a1e-5b8d-4e6f-9a0b-1c2d3e4f5a6b.jsonl"


def compress(data: bytes, suffix: str) -> bytes:
    return gzip.compress(data) if suffix == ".gz" else zstandard.ZstdCompressor().compress(data)


def decompress(data: bytes, suffix: str) -> bytes:
    if suffix == ".gz":
        return gzip.decompress(data)
    return b"".join(zstandard.ZstdDecompressor().read_to_iter(io.BytesIO(data)))


def compressed_copy(source: Path, folder: Path, suffix: str, name: str | None = None) -> Path:
    path = folder / ((name or source.name) + suffix)
    path.write_bytes(compress(source.read_bytes(), suffix.lower()))
    return path


def _plain_copy(source: Path, folder: Path) -> Path:
    path = folder / source.name
    shutil.copyfile(source, path)
    return path


def _normalized(result, compressed: Path, plain: Path) -> tuple:
    """stdout, stderr and exit status with the compressed file's name put back to the plain one's."""
    swap = lambda data: data.replace(str(compressed).encode(), str(plain).encode()).replace(
        compressed.name.encode(), plain.name.encode())
    return swap(result.stdout), swap(result.stderr), result.returncode


# ---------------------------------------------------------------------------------------------
# Every command reads them as the plain file


COMMANDS = [
    ("validate",), ("text",), ("tools",), ("tools", "--format", "table"), ("dataset",),
    ("export", "--to", "openai-chat"), ("migrate", "--dry-run"),
]


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_each_command_reads_a_compressed_recording_as_the_plain_one(tmp_path, command, suffix):
    # Legacy records: validate warns on each line, and migrate has something to do.
    source = tmp_path / "source"
    source.mkdir()
    (source / WEATHER.name).write_bytes(legacy_bytes(WEATHER.read_bytes()))
    plain = _plain_copy(source / WEATHER.name, tmp_path)
    packed = compressed_copy(plain, tmp_path, suffix)
    expected = run_chatconv(*command, plain)
    found = run_chatconv(*command, packed)
    assert _normalized(found, packed, plain) == (expected.stdout, expected.stderr, expected.returncode)
    assert expected.stdout or expected.stderr  # something was compared


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_migrate_to_standard_output_compresses_as_the_input_is(tmp_path, suffix):
    packed = tmp_path / ("legacy.jsonl" + suffix)
    packed.write_bytes(compress(legacy_bytes(WEATHER.read_bytes()), suffix))
    result = subprocess.run([sys.executable, "-m", "chatconv", "migrate", str(packed)], capture_output=True)
    assert result.returncode == 0 and b"Traceback" not in result.stderr
    assert decompress(result.stdout, suffix) == WEATHER.read_bytes()
    assert result.stderr.startswith(b"1 file, 10 records read: 10 migrated")


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
@pytest.mark.parametrize("source", [FINETUNE, CLAUDE_CODE], ids=["openai-chat", "claude-code"])
def test_import_reads_a_compressed_recording_as_the_plain_one(tmp_path, source, suffix):
    plain = _plain_copy(source, tmp_path)
    packed = compressed_copy(plain, tmp_path, suffix)
    expected = run_chatconv("import", plain)
    assert expected.returncode == 0 and expected.stdout
    assert _normalized(run_chatconv("import", packed), packed, plain) == (expected.stdout, expected.stderr, 0)


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
@pytest.mark.parametrize("command, source", [(("import",), FINETUNE), (("dataset",), WEATHER)], ids=["import", "dataset"])
def test_names_made_of_a_file_name_do_not_depend_on_its_compression(tmp_path, command, source, suffix):
    # A conversation named after its file (import: finetune.jsonl:1; dataset: weather-steps-step-0)
    # keeps its name when the file is compressed: the output is byte for byte the plain file's.
    plain = tmp_path / source.name  # (steps without their conversation's id: named after the file)
    plain.write_bytes(b"".join(orjson.dumps({k: v for k, v in orjson.loads(line).items() if k != "conversationId"})
                               + b"\n" for line in source.read_bytes().splitlines()))
    expected = run_chatconv(*command, plain)
    assert expected.returncode == 0 and Path(source.name).stem.encode() in expected.stdout
    assert run_chatconv(*command, compressed_copy(plain, tmp_path, suffix)).stdout == expected.stdout


def test_folders_are_searched_for_compressed_recordings(tmp_path):
    for suffix in (".gz", ".zst"):
        compressed_copy(WEATHER, tmp_path, suffix, "a.jsonl")
        compressed_copy(WEATHER, tmp_path, suffix, "b.ndjson")
    compressed_copy(WEATHER, tmp_path, ".gz", "notes.txt")  # not a recording's name: not searched
    found = sorted(Path(file).name for file, _ in discover([tmp_path]))
    assert found == ["a.jsonl.gz", "a.jsonl.zst", "b.ndjson.gz", "b.ndjson.zst"]
    problems, summary = validate_path(tmp_path)
    assert summary.files == 4 and summary.records == 40 and summary.unreadable == 0
    assert problems == []


def test_a_suffix_in_capitals_is_read_too(tmp_path):
    path = compressed_copy(WEATHER, tmp_path, ".GZ", "run.JSONL")
    assert [r.data for r in iter_records(path)] == [r.data for r in iter_records(WEATHER)]


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_an_empty_compressed_file_is_an_empty_file(tmp_path, suffix):
    for name, data in (("zero.jsonl", b""), ("blank.jsonl", compress(b"\n\n", suffix))):
        path = tmp_path / (name + suffix)
        path.write_bytes(data)
        problems, summary = validate_path(path)
        assert [(p.code, p.line) for p in problems] == [("empty-file", 1)] and summary.unreadable == 0


def test_a_file_of_several_gzip_members_or_zstd_frames_is_read_whole(tmp_path):
    half = len(WEATHER.read_bytes().splitlines(keepends=True)) // 2
    lines = WEATHER.read_bytes().splitlines(keepends=True)
    first, second = b"".join(lines[:half]), b"".join(lines[half:])
    for suffix in (".gz", ".zst"):
        path = tmp_path / f"joined.jsonl{suffix}"
        path.write_bytes(compress(first, suffix) + compress(second, suffix))  # `cat a.gz b.gz`
        assert [r.data for r in iter_records(path)] == [r.data for r in iter_records(WEATHER)]


def _skippable(magic: int, data: bytes) -> bytes:
    return magic.to_bytes(4, "little") + len(data).to_bytes(4, "little") + data


def test_a_zstd_file_that_starts_with_a_skippable_frame_is_read(tmp_path):
    # pzstd writes one before each frame (magic 0x184D2A50 to 0x184D2A5F, a size, that
    # many bytes); it was refused as "not zstd data". One within the data is skipped too.
    lines = WEATHER.read_bytes().splitlines(keepends=True)
    path = tmp_path / "run.jsonl.zst"
    path.write_bytes(_skippable(0x184D2A50, b"\x00\x01") + compress(b"".join(lines[:2]), ".zst")
                     + _skippable(0x184D2A5F, b"x" * 2000) + compress(b"".join(lines[2:]), ".zst"))
    result = run_chatconv("validate", path)
    assert result.returncode == 0, result.stdout_text + result.stderr_text
    assert f"1 file, {len(lines)} records: 0 errors" in result.stdout_text
    standard_input = run_chatconv("validate", "-", stdin=path.read_bytes())  # zstd data, said so
    assert standard_input.returncode == 2 and "standard input is zstd data" in standard_input.stdout_text


# ---------------------------------------------------------------------------------------------
# Streamed: batches and lines as from the plain file


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=300).map(lambda b: b"x" + b.replace(b"\n", b"")), max_size=40),  # not UTF-16
       st.booleans(), st.integers(1, 600), st.sampled_from([".gz", ".zst"]))
def test_batches_and_lines_of_a_compressed_stream_are_the_plain_ones(lines, newline_at_end, batch_bytes, suffix):
    data = b"\n".join(lines) + (b"\n" if newline_at_end and lines else b"")
    plain = list(iter_line_batches(io.BytesIO(data), batch_bytes))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"f.jsonl{suffix}"
        path.write_bytes(compress(data, suffix))
        with open_binary(path) as stream:
            assert list(iter_line_batches(stream, batch_bytes)) == plain
        with open_binary(path) as stream:
            assert list(stream) == list(io.BytesIO(data))


def test_the_stream_reads_as_a_binary_file_does(tmp_path):
    data = WEATHER.read_bytes()
    path = compressed_copy(WEATHER, tmp_path, ".zst")
    with open_binary(path) as stream:
        assert stream.peek(5)[:5] == data[:5]
        assert stream.read(7) == data[:7]
        assert stream.readline() == data[7:data.index(b"\n") + 1]
        rest = stream.read()
        assert rest == data[data.index(b"\n") + 1:] and stream.read() == b"" and stream.readline() == b""



@pytest.mark.parametrize("size", [1, 3, 6, 7, 20, 64, -1, None])
def test_readline_of_a_size_takes_what_a_binary_file_takes(size):
    data = b"ab\nlonger line\n\nlast without newline"
    stream = DecompressedStream(io.BytesIO(), "f.jsonl.gz", "gzip", iter([data[i:i + 5] for i in range(0, len(data), 5)]))
    plain = io.BytesIO(data)
    while expected := plain.readline(size):
        assert stream.readline(size) == expected
    assert stream.readline(size) == b""


def test_readline_of_a_size_decompresses_a_long_line_only_that_far():
    taken = []

    def chunks():  # one line of 100 MB, decompressed 1,000 bytes at a time
        for _ in range(100_000):
            taken.append(1)
            yield b"x" * 1000

    stream = DecompressedStream(io.BytesIO(), "f.jsonl.gz", "gzip", chunks())
    assert stream.readline(5000) == b"x" * 5000
    assert len(taken) <= 6


# ---------------------------------------------------------------------------------------------
# Bad compressed files: one clear problem, exit status 2


def _cut(path: Path) -> bytes:
    """The file's compressed bytes cut off two thirds of the way."""
    data = path.read_bytes()
    return data[:len(data) * 2 // 3]


def _big_plain(tmp_path: Path, copies: int = 300) -> Path:
    """A recording of more than one batch (BATCH_BYTES) that does not compress to nearly nothing."""
    lines = []
    for copy in range(copies):
        for line in WEATHER.read_bytes().splitlines():
            record = orjson.loads(line)
            record["conversationId"] = f"{record['conversationId']}-{copy}"
            record["metadata"] = {"note": random.Random(len(lines)).randbytes(40).hex()}  # not compressed to nearly nothing
            lines.append(orjson.dumps(record) + b"\n")
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(lines))
    return path


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_cut_short_file_is_one_problem_after_every_whole_line_before_it(tmp_path, suffix, jobs):
    plain = _big_plain(tmp_path, 120)
    packed = compressed_copy(plain, tmp_path, suffix)
    packed.write_bytes(_cut(packed))
    readable = decompress_prefix(packed, suffix)
    whole = readable.count(b"\n")
    assert 0 < whole < len(plain.read_bytes().splitlines())
    result = run_chatconv("validate", "--jobs", jobs, packed)
    assert result.returncode == 2
    tool = "gzip" if suffix == ".gz" else "zstd"
    *_, last, summary, counts = result.stdout_text.splitlines()
    assert last.startswith(f"{packed}:{whole + 1}:1: error: $: the {tool} data is cut short or corrupt after "
                           f"line {whole}, the last whole line")
    assert f"`{tool} -dc FILE > PART.jsonl` keeps the lines before" in last
    # Every whole line before was checked (the plain file's first lines are clean): no other problem.
    assert summary == f"1 file, {whole} records: 1 error, 0 warnings"
    assert counts.split() == ["1", "×", "compressed-data", "(error)"]


def decompress_prefix(path: Path, suffix: str) -> bytes:
    """What a streaming decompressor gets out of a cut file before it fails."""
    out = []
    if suffix == ".gz":
        with gzip.open(path) as stream:
            try:
                while chunk := stream.read1(1 << 16):
                    out.append(chunk)
            except EOFError:
                pass
    else:
        out.append(zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes()))
    return b"".join(out)


@pytest.mark.parametrize("command", [("text",), ("tools",), ("dataset",), ("import",), ("import", "--jobs", "2"),
                                     ("export", "--to", "openai-chat"), ("migrate", "--dry-run")], ids=" ".join)
def test_every_command_reports_a_cut_short_file_with_status_2(tmp_path, command):
    packed = compressed_copy(_big_plain(tmp_path, 60), tmp_path, ".gz")
    packed.write_bytes(_cut(packed))
    result = run_chatconv(*command, packed)
    assert result.returncode == 2
    assert "the gzip data is cut short or corrupt after line" in result.stderr_text


def test_import_jobs_2_gives_every_line_before_a_cut_short_file_s_failure(tmp_path):
    plain = tmp_path / "ft.jsonl"
    plain.write_bytes(b"".join(orjson.dumps({"messages": [{"role": "user", "content": f"question {i} " + "x" * 200},
                                                           {"role": "assistant", "content": f"answer {i}"}]}) + b"\n"
                               for i in range(3000)))
    packed = compressed_copy(plain, tmp_path, ".gz")
    packed.write_bytes(_cut(packed))
    whole = decompress_prefix(packed, ".gz").count(b"\n")
    for jobs in (1, 2):
        run = ImportRun()
        lines = []
        with pytest.raises(UnreadableInput) as raised:
            for line in import_records([str(packed)], run=run, jobs=jobs, batch_bytes=4096):
                lines.append(line)
        assert len(lines) == whole and raised.value.problems[0].line == whole + 1


def test_corrupt_data_is_one_problem(tmp_path):
    packed = compressed_copy(WEATHER, tmp_path, ".gz")
    data = bytearray(packed.read_bytes())
    data[len(data) // 2] ^= 0xFF
    packed.write_bytes(bytes(data))
    result = run_chatconv("validate", packed)
    assert result.returncode == 2 and "the gzip data is cut short or corrupt" in result.stdout_text


@pytest.mark.parametrize("name, data, says", [
    ("plain.jsonl.gz", WEATHER.read_bytes(), "the file is named .gz but does not hold gzip data (if it is plain "
                                             "text, rename it without .gz; else compress it with gzip)"),
    ("other.jsonl.gz", compress(WEATHER.read_bytes(), ".zst"), "the file is named .gz but does not hold gzip "
                                                               "data (it holds zstd data: rename it to end in .zst)"),
    ("plain.jsonl.zst", WEATHER.read_bytes(), "the file is named .zst but does not hold zstd data"),
])
def test_a_file_named_for_a_compression_it_does_not_hold_is_one_problem(tmp_path, name, data, says):
    path = tmp_path / name
    path.write_bytes(data)
    result = run_chatconv("validate", path)
    assert result.returncode == 2
    assert result.stdout_text.startswith(f"{path}:1:1: error: $: {says}")
    text = run_chatconv("text", path)
    assert text.returncode == 2 and says in text.stderr_text


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
@pytest.mark.parametrize("command", ["validate", "migrate", "text"])
def test_compressed_standard_input_is_one_problem_that_says_what_to_do(command, suffix):
    result = run_chatconv(command, "-", stdin=compress(WEATHER.read_bytes(), suffix))
    kind = "gzip" if suffix == ".gz" else "zstd"
    assert result.returncode == 2
    assert (f"standard input is {kind} data (name the file instead, which is read decompressed, or decompress it "
            f"into the pipe: {kind} -dc FILE{suffix} | chatconv ...)") in result.stdout_text + result.stderr_text


def test_a_bad_compressed_file_leaves_the_in_place_file_as_it_was(tmp_path):
    packed = tmp_path / "run.jsonl.gz"
    packed.write_bytes(_cut(compressed_copy(_big_plain(tmp_path, 60), tmp_path, ".gz")))
    before = packed.read_bytes()
    result = run_chatconv("migrate", "--in-place", packed)
    assert result.returncode == 2 and "the gzip data is cut short" in result.stderr_text
    assert packed.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "big.jsonl", "big.jsonl.gz", "run.jsonl.gz"]


def test_a_library_reader_gets_unreadable_input(tmp_path):
    path = tmp_path / "run.jsonl.zst"
    path.write_bytes(WEATHER.read_bytes())
    with pytest.raises(UnreadableInput) as raised:
        list(iter_records(path))
    assert raised.value.problems[0].code == "compressed-data"


# ---------------------------------------------------------------------------------------------
# migrate writes them back compressed the same way


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_migrate_in_place_keeps_the_compression_and_the_records(tmp_path, suffix):
    path = tmp_path / ("weather.jsonl" + suffix)
    path.write_bytes(compress(legacy_bytes(WEATHER.read_bytes()), suffix))
    result = run_chatconv("migrate", "--in-place", "--backup", path)
    assert result.returncode == 0, result.stderr_text
    assert decompress(path.read_bytes(), suffix) == WEATHER.read_bytes()
    assert decompress(Path(f"{path}.bak").read_bytes(), suffix) == legacy_bytes(WEATHER.read_bytes())
    migrated = path.read_bytes()
    again = run_chatconv("migrate", "--in-place", path)  # nothing to change: the file is not rewritten
    assert again.returncode == 0 and "0 migrated, 10 unchanged" in again.stderr_text
    assert path.read_bytes() == migrated


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_migrate_to_a_folder_keeps_each_file_s_compression(tmp_path, suffix):
    source = tmp_path / "in"
    source.mkdir()
    (source / ("weather.jsonl" + suffix)).write_bytes(compress(legacy_bytes(WEATHER.read_bytes()), suffix))
    (source / "plain.jsonl").write_bytes(legacy_bytes(WEATHER.read_bytes()))
    result = run_chatconv("migrate", source, "-o", tmp_path / "out", "--jobs", "2")
    assert result.returncode == 0, result.stderr_text
    assert decompress((tmp_path / "out" / ("weather.jsonl" + suffix)).read_bytes(), suffix) == WEATHER.read_bytes()
    assert (tmp_path / "out" / "plain.jsonl").read_bytes() == WEATHER.read_bytes()


def test_migrate_to_a_named_file_compresses_as_its_name_says(tmp_path):
    legacy = tmp_path / "legacy.jsonl.zst"
    legacy.write_bytes(compress(legacy_bytes(WEATHER.read_bytes()), ".zst"))
    for name in ("out.jsonl", "out.jsonl.gz", "out.jsonl.zst"):
        result = run_chatconv("migrate", legacy, "-o", tmp_path / name)
        assert result.returncode == 0, result.stderr_text
        data = (tmp_path / name).read_bytes()
        suffix = Path(name).suffix
        assert (data if suffix == ".jsonl" else decompress(data, suffix)) == WEATHER.read_bytes()


def test_gzip_output_names_no_file_and_no_time(tmp_path):
    """The same records give the same bytes, whenever and wherever written."""
    legacy = compressed_copy(WEATHER, tmp_path, ".gz", "legacy.jsonl")
    outputs = []
    for name in ("a.jsonl.gz", "b.jsonl.gz"):
        assert run_chatconv("migrate", legacy, "-o", tmp_path / name).returncode == 0
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1] and outputs[0][4:8] == b"\0\0\0\0"  # MTIME 0


# ---------------------------------------------------------------------------------------------
# --jobs: the main process decompresses, the workers get the lines


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_validate_jobs_2_gives_the_same_problems_on_a_compressed_file(tmp_path, suffix):
    plain = tmp_path / "run.jsonl"
    plain.write_bytes(legacy_bytes(WEATHER.read_bytes()) * 20)  # warnings, and errors across lines
    packed = compressed_copy(plain, tmp_path, suffix)
    expected, summary = validate_path(plain, jobs=1)
    assert expected and summary.records == 200
    for jobs in (1, 2):
        found, found_summary = validate_path(packed, jobs=jobs, batch_bytes=1024)
        assert [replace(p, file=str(plain)) for p in found] == expected
        assert found_summary == summary


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_import_jobs_2_gives_the_same_lines_on_a_compressed_file(tmp_path, suffix):
    plain = tmp_path / "ft.jsonl"
    plain.write_bytes(FINETUNE.read_bytes() * 30)
    packed = compressed_copy(plain, tmp_path, suffix)
    expected = list(import_records([str(plain)], run=ImportRun()))
    found = list(import_records([str(packed)], run=ImportRun(), jobs=2, batch_bytes=512))
    assert [line.replace(packed.name.encode(), plain.name.encode()) for line in found] == expected


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_migrate_jobs_2_on_a_compressed_file_of_several_batches(tmp_path, suffix):
    plain = _big_plain(tmp_path, 200)  # > BATCH_BYTES: workers get more than one batch
    legacy = tmp_path / "legacy.jsonl"
    legacy.write_bytes(legacy_bytes(plain.read_bytes()))
    packed = compressed_copy(legacy, tmp_path, suffix)
    assert os.path.getsize(legacy) > BATCH_BYTES
    for output in (tmp_path / ("out" + suffix), tmp_path / "out.jsonl"):  # compressed here; plain by the workers
        with Workers(2) as workers:
            tally = migrate_file(str(packed), output, workers=workers)
        data = output.read_bytes()
        assert (decompress(data, suffix) if output.suffix != ".jsonl" else data) == plain.read_bytes()
        assert tally.read == tally.migrated == 2000


# ---------------------------------------------------------------------------------------------
# The property: migrating a compressed file is compressing the migrated plain file


_PROPERTIES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                              HealthCheck.function_scoped_fixture])


@_PROPERTIES
@given(jsonl_lines(), st.sampled_from([".gz", ".zst"]), st.sampled_from(["in-place", "output"]))
def test_migrating_a_compressed_file_is_compressing_the_migrated_plain_file(tmp_path_factory, lines, suffix, how):
    folder = tmp_path_factory.mktemp("property")
    data = b"".join(line for _, line in lines)
    plain = folder / "run.jsonl"
    plain.write_bytes(data)
    packed = folder / ("run.jsonl" + suffix)
    packed.write_bytes(compress(data, suffix))
    results = {}
    for path, out in ((plain, folder / "plain-out.jsonl"),
                      (packed, packed if how == "in-place" else folder / ("packed-out.jsonl" + suffix))):
        rejects_path = folder / f"{path.name}.rejects"
        try:
            with open(rejects_path, "wb") as rejects:
                tally = migrate_file(str(path), out, rejects=rejects)
        except UnreadableInput as exc:  # a file that starts as UTF-16 does, say: refused alike
            results[path] = [(p.line, p.message, p.code) for p in exc.problems]
            assert out.exists() == (out == packed)  # nothing written; an input left as it was
            continue
        written = out.read_bytes()
        results[path] = (decompress(written, suffix) if path is packed else written, tally.read, tally.migrated,
                         tally.rejected, rejects_path.read_bytes().replace(packed.name.encode(), plain.name.encode()))
    assert results[packed] == results[plain]


def test_a_compressed_eval_file_named_on_the_command_line_is_read_and_migrated_whole(tmp_path):
    source = next(iter(sorted((Path(__file__).parent.parent / "examples" / "evals").glob("*.yaml"))))
    plain = _plain_copy(source, tmp_path)
    packed = compressed_copy(plain, tmp_path, ".gz")
    expected = run_chatconv("validate", plain)
    assert _normalized(run_chatconv("validate", packed), packed, plain) == (expected.stdout, expected.stderr,
                                                                             expected.returncode)
    assert run_chatconv("migrate", "--in-place", plain).returncode == 0
    assert plain.read_bytes() != source.read_bytes()  # an older era's file: it moved on
    assert run_chatconv("migrate", "--in-place", packed).returncode == 0
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()


def _answered_later(conversations: int) -> list[bytes]:
    """Interleaved conversations whose calls are answered a step later: `tools` reads a waiting
    call's arguments again, and export a conversation's earlier steps, when they are final."""
    lines = []
    for step in range(2):
        for c in range(conversations):
            output = ({"role": "assistant", "content": [{"type": "tool-call", "toolCallId": f"id{c}", "toolName": "t",
                                                         "input": {"q": c, "pad": "x" * 200}}]} if step == 0 else
                      {"role": "tool", "content": [{"type": "tool-result", "toolCallId": f"id{c}", "toolName": "t",
                                                    "output": {"type": "text", "value": f"v{c}"}}]})
            lines.append(orjson.dumps({"conversationId": f"c{c}", "stepIndex": step,
                                       "input": {"role": "user", "content": "go"}, "output": [output]}) + b"\n")
    return lines


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_calls_answered_later_and_conversations_across_batches_read_alike_compressed(tmp_path, suffix, jobs):
    from chatconv.formats.exporting import export_bodies
    from chatconv.recordings.tools import tool_row_lines

    plain = tmp_path / "later.jsonl"
    plain.write_bytes(b"".join(_answered_later(40)))
    packed = compressed_copy(plain, tmp_path, suffix)
    rows = {path: b"".join(tool_row_lines([str(path)], jobs=jobs, batch_bytes=2048)) for path in (plain, packed)}
    assert rows[packed] == rows[plain]
    assert rows[plain].count(b'"status":"ok"') == 40 and b'"q":39' in rows[plain]
    for per in ("step", "conversation"):
        bodies = {path: list(export_bodies([str(path)], "openai-chat", per, jobs=jobs, batch_bytes=2048))
                  for path in (plain, packed)}
        assert bodies[packed] == bodies[plain] and len(bodies[plain]) == (80 if per == "step" else 40)


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_data_that_expands_past_max_expansion_is_an_error_read_no_further(tmp_path, kind):
    # A 300 KB .gz (a 9.6 KB .zst) of 300 MB of newlines kept every command busy past 90 s with no
    # output: a file's data may expand 250 times the bytes read of it, past its first 4 MiB.
    newlines = b"\n" * (8 << 20)
    packed = gzip.compress(newlines, 9) if kind == "gzip" else zstandard.ZstdCompressor(level=19).compress(newlines)
    record = (orjson.dumps({"conversationId": "c", "stepIndex": 0, "input": {"role": "user", "content": "hi"},
                            "output": []}) + b"\n")
    bomb = tmp_path / f"run.jsonl{'.gz' if kind == 'gzip' else '.zst'}"
    bomb.write_bytes((gzip.compress(record) if kind == "gzip" else zstandard.ZstdCompressor().compress(record)) + packed)
    for command in (["validate"], ["migrate", "--check"]):  # (import, text, tools read through the same stream)
        result = run_chatconv(*command, bomb, timeout=30)
        assert result.returncode == 2, (command, result.stderr_text)
        expected = f"data expands more than {'250' if kind == 'gzip' else '10,000'} times its size"
        assert expected in result.stdout_text + result.stderr_text, command
    assert run_chatconv("validate", bomb, "--max-expansion", "100000", timeout=60).returncode == 0  # a file of yours


def test_a_stream_that_expands_past_its_share_hands_out_the_lines_before_then_fails(tmp_path, monkeypatch):
    from chatconv.sources import compressed
    from chatconv.sources.compressed import open_decompressed

    monkeypatch.setattr(compressed, "EXPANSION_FREE", 1 << 16)
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"a": 1}\n{"b": 2}\n', 1) + gzip.compress(b"x" * (4 << 20), 9))
    with open_decompressed(open(path, "rb"), str(path), "gzip") as stream:
        assert stream.readline() == b'{"a": 1}\n' and stream.readline() == b'{"b": 2}\n'
        with pytest.raises(UnreadableInput) as raised:
            stream.readline()
    [problem] = raised.value.problems
    assert problem.line == 3 and problem.code == "compressed-data" and "read no further than line 2" in problem.message


def test_a_compressed_files_progress_is_told_in_its_own_bytes(tmp_path):
    # The bar measures a file by its size: told the decompressed bytes, a .gz filled it at a
    # tenth of the way and stood still while the rest was read.
    from chatconv.sources import iter_line_batches, open_binary
    from chatconv.sources.progress import watching_reads

    lines = b"".join(orjson.dumps({"n": n, "text": "x" * (n % 50)}) + b"\n" for n in range(200_000))
    path = tmp_path / "run.jsonl.gz"
    path.write_bytes(gzip.compress(lines, 6))

    class Watcher:
        told: list[int] = []

        def file(self, name):
            pass

        def read(self, count):
            self.told.append(count)

    watcher = Watcher()
    with watching_reads(watcher), open_binary(str(path)) as stream:
        batches = list(iter_line_batches(stream, 1 << 18))
    assert b"".join(batch.data for batch in batches) == lines and len(watcher.told) == len(batches) > 4
    # (the bytes after the last batch, its end read, are the next file's start to the bar)
    assert 0.95 * path.stat().st_size <= sum(watcher.told) <= path.stat().st_size
    assert all(count >= 0 for count in watcher.told)


def test_zstd_data_stored_whole_is_read_in_reads_that_grow(tmp_path):
    # Random bytes do not compress: zstd stores them whole, a byte out for a byte in. The reads
    # that start small (for data that repeats) grow to 512 bytes, not 16 for ever.
    from chatconv.sources.decompress import zstd_chunks

    data = random.Random(7).randbytes(1 << 20)

    class Counted(io.BytesIO):
        reads = 0

        def read(self, size=-1):
            Counted.reads += 1
            return super().read(size)

    raw = Counted(zstandard.ZstdCompressor().compress(data))
    assert b"".join(zstd_chunks(raw)) == data
    assert Counted.reads < (1 << 20) // 256  # 16-byte reads would be 65,536
