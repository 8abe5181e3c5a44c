"""Limits on what is read: a line longer than --max-line-bytes, a file to read whole larger
than --max-file-bytes, devices: an error with a message, never memory without bound."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys

import pytest
from click.testing import CliRunner

from chatconv.cli import cli
from chatconv.limits import LIMITS, Limits, set_limits
from chatconv.problems import UnreadableInput
from chatconv.sources import iter_line_batches

from conftest import DATA

RECORD = b'{"a": 1}\n'


@pytest.fixture(autouse=True)
def default_limits():
    yield
    set_limits(**vars(Limits()))


def long_file(tmp_path, before: int = 3, long: int = 5000, after: int = 2):
    path = tmp_path / "long.jsonl"
    path.write_bytes(RECORD * before + b'"' + b"x" * long + b'"\n' + RECORD * after)
    return path


def test_a_long_line_ends_the_batches_after_the_lines_before_it(tmp_path):
    set_limits(max_line_bytes=1000)
    with open(long_file(tmp_path), "rb") as stream:
        batches = iter_line_batches(stream, batch_bytes=7)
        read = []
        with pytest.raises(UnreadableInput) as caught:
            for batch in batches:
                read.append(batch.data)
    assert b"".join(read) == RECORD * 3
    problem = caught.value.problems[0]
    assert (problem.line, problem.code) == (4, "too-large")
    assert problem.message == "line 4 is longer than 1000 bytes (--max-line-bytes): not read"


def test_lines_at_the_limit_are_read(tmp_path):
    set_limits(max_line_bytes=5002)  # the quotes count, the newline does not
    with open(long_file(tmp_path), "rb") as stream:
        assert b"".join(b.data for b in iter_line_batches(stream, batch_bytes=7)) == long_file(tmp_path).read_bytes()


@pytest.mark.parametrize("lines, long", [
    ([3, 10, 11, 2], 3),  # the first line past the limit, among short ones
    ([11, 1], 1),
    ([10] * 50 + [1, 0, 11], 53),  # far into one batch: many windows of the limit before it
    ([10] * 50 + [4, 11], 52),  # the last line, without its newline
    ([10] * 50 + [4, 10], None),  # at the limit: read
    ([0, 0, 10, 0], None),
])
def test_a_long_line_is_found_wherever_it_is_in_a_batch_larger_than_the_limit(lines, long):
    set_limits(max_line_bytes=10)
    data = b"\n".join(b"x" * length for length in lines)
    batches = iter_line_batches(io.BytesIO(data))  # one batch of 1 MiB: longer than the limit
    if long is None:
        assert b"".join(batch.data for batch in batches) == data
        return
    with pytest.raises(UnreadableInput) as caught:
        list(batches)
    assert caught.value.problems[0].line == long


def test_an_endless_line_is_not_held(tmp_path):
    set_limits(max_line_bytes=1 << 20)

    class Endless(io.RawIOBase):  # /dev/zero that counts what it gave
        given = 0

        def readable(self):
            return True

        def readinto(self, buffer):
            buffer[:] = b"x" * len(buffer)
            Endless.given += len(buffer)
            if Endless.given > 64 << 20:
                raise AssertionError("read on past the limit")
            return len(buffer)

    with pytest.raises(UnreadableInput, match="line 1 is longer than 1 MiB"):
        list(iter_line_batches(io.BufferedReader(Endless())))


def test_validate_reports_the_long_line_and_exits_2(tmp_path):
    result = CliRunner().invoke(cli, ["validate", "--max-line-bytes", "1KiB", str(long_file(tmp_path))])
    assert result.exit_code == 2
    assert "long.jsonl:4:1: error: $: line 4 is longer than 1 KiB (--max-line-bytes): not read" in result.output


def test_the_default_line_limit_comes_back_on_the_next_run(tmp_path):
    CliRunner().invoke(cli, ["validate", "--max-line-bytes", "1KiB", str(long_file(tmp_path))])
    result = CliRunner().invoke(cli, ["validate", str(long_file(tmp_path))])
    assert LIMITS.max_line_bytes == 64 << 20 and "longer than" not in result.output


@pytest.mark.parametrize("value", ["0", "12XB", "-3"])
def test_a_size_that_is_not_one_is_a_usage_error(tmp_path, value):
    result = CliRunner().invoke(cli, ["text", "--max-line-bytes", value, str(long_file(tmp_path))])
    assert result.exit_code == 2 and "is not a size" in result.output


@pytest.mark.parametrize("value", ["9000000000GiB", "9" * 400, "1" + "0" * 400 + ".5KiB"])
def test_a_size_no_read_can_have_is_a_usage_error(tmp_path, value):
    result = CliRunner().invoke(cli, ["text", "--max-file-bytes", value, str(long_file(tmp_path))])
    assert result.exit_code == 2 and f"{value!r} is larger than any file this machine can read" in result.output


@pytest.mark.parametrize("named", [True, False])
def test_a_huge_file_limit_takes_no_memory_of_its_own(tmp_path, named):
    # A file read whole is read a part at a time: a limit of a million GiB is never allocated.
    path = tmp_path / "small.yaml"
    path.write_text("evalcases:\n  - id: a\n")
    args = ["validate", "--max-file-bytes", "1000000GiB", str(path) if named else "-"]
    with open(path, "rb") as stdin:
        result = run(args, stdin=stdin)
    assert b"Error" not in result.stderr and b"Traceback" not in result.stderr, result.stderr.decode()
    assert b"1 file, 1 record" in result.stdout + result.stderr


def test_a_yaml_document_over_the_file_limit_is_refused_before_parsing(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("evalcases:\n" + "  - id: a\n" * 200)
    result = CliRunner().invoke(cli, ["validate", "--max-file-bytes", "1KiB", str(path)])
    assert result.exit_code == 2
    assert "the file is larger than 1 KiB (--max-file-bytes): not read" in result.output


def run(args, **options):
    return subprocess.run([sys.executable, "-m", "chatconv", *args], capture_output=True, timeout=60, **options)


# Runs chatconv in a child and prints its peak memory (KiB): the one way to measure a child
# alone (RUSAGE_CHILDREN of this process would count every child the test run waited for).
PEAK = """
import resource, subprocess, sys
with open(sys.argv[1], "rb") as stdin:
    done = subprocess.run([sys.executable, "-m", "chatconv", *sys.argv[2:]], stdin=stdin, capture_output=True,
                          timeout=30)  # kills the child: no reader of /dev/zero left behind
sys.stdout.write(f"{done.returncode} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n")
sys.stdout.buffer.write(done.stdout + done.stderr)
"""


@pytest.mark.parametrize("args", [["validate", "/dev/zero"], ["text", "-"]])
def test_dev_zero_is_ended_by_the_limit_in_bounded_memory(args):
    # Named explicitly, a device is read: the default limits end it, in under 150 MiB.
    done = subprocess.run([sys.executable, "-c", PEAK, "/dev/zero", *args], capture_output=True, timeout=60)
    status, peak = done.stdout.split(b"\n", 1)[0].split()
    assert int(status) == 2, done.stdout
    assert b"(--max-" in done.stdout and b"Traceback" not in done.stdout
    assert int(peak) < 150 * 1024, f"{int(peak) // 1024} MiB"


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_compressed_endless_line_is_ended_by_the_limit_in_bounded_memory(tmp_path, suffix):
    # A .gz or .zst file is read through its decompressed stream: a long line is decompressed
    # only a part at a time too (160 MiB of zeros, one line, 160 KiB of gzip, 5 KiB of zstd).
    import zstandard

    path = tmp_path / f"zeros.jsonl{suffix}"
    with open(path, "wb") as raw:
        out = gzip.open(raw, "wb", compresslevel=1) if suffix == ".gz" else \
            zstandard.ZstdCompressor().stream_writer(raw, closefd=False)
        with out:
            for _ in range(160):
                out.write(bytes(1 << 20))
    # (--max-expansion off: data expanding 30,000 times ends sooner at it; here the line limit is tried)
    done = subprocess.run([sys.executable, "-c", PEAK, "/dev/null", "text", "--max-line-bytes", "1MiB",
                           "--max-expansion", "1000000000", str(path)],
                          capture_output=True, timeout=60)
    status, peak = done.stdout.split(b"\n", 1)[0].split()
    assert int(status) == 2, done.stdout
    assert b"line 1 is longer than 1 MiB (--max-line-bytes): not read" in done.stdout
    assert int(peak) < 100 * 1024, f"{int(peak) // 1024} MiB"


def test_a_jsonl_link_to_a_device_in_a_folder_is_skipped(tmp_path):
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
    result = run(["validate", str(tmp_path)])
    assert result.returncode == 0, result.stderr


def test_a_referenced_file_over_the_file_limit_is_refused_not_read(tmp_path):
    (tmp_path / ".git").mkdir()  # the repository root that references stay inside
    (tmp_path / "big.md").write_bytes(b"a" * 5000)
    (tmp_path / "small.md").write_bytes(b"a" * 100)
    case = "  - id: {0}\n    criteria: x\n    input:\n      - role: user\n        content:\n" \
           "          - type: file\n            value: {0}.md\n"
    (tmp_path / "e.yaml").write_text("tests:\n" + case.format("big") + case.format("small"))
    result = CliRunner().invoke(cli, ["validate", "--max-file-bytes", "4KiB", str(tmp_path / "e.yaml")])
    assert result.exit_code == 1
    assert "big.md' is larger than 4 KiB (--max-file-bytes): not read" in result.output
    assert "small.md" not in result.output and "1 error" in result.output


def test_migrate_refuses_a_yaml_document_over_the_file_limit(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("testcases:\n" + "  - id: a\n    outcome: x\n    messages: [{role: user, content: hi}]\n" * 40)
    result = CliRunner().invoke(cli, ["migrate", "--max-file-bytes", "1KiB", str(path), "-o", str(tmp_path / "o.yaml")])
    assert result.exit_code == 1
    assert "the file is larger than 1 KiB (--max-file-bytes): not read" in result.output
    assert not (tmp_path / "o.yaml").exists()


@pytest.mark.parametrize("args", [["validate", "--field", "input=input"], ["import"]])
def test_commands_that_read_record_by_record_stop_at_the_long_line_too(tmp_path, args):
    result = run([*args, "--max-line-bytes", "1KiB", str(long_file(tmp_path))])  # main() gives the exit status
    assert result.returncode == 2
    assert b"long.jsonl:4:1: error: $: line 4 is longer than 1 KiB (--max-line-bytes): not read" in \
        result.stdout + result.stderr


def test_migrate_of_a_device_named_reads_no_more_than_the_file_limit(tmp_path):
    result = run(["migrate", "--max-file-bytes", "1MiB", "/dev/zero", "-o", str(tmp_path / "out.yaml")])
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(b"/dev/zero: error: the file is larger than 1 MiB (--max-file-bytes): not read")


def test_a_claude_code_transcript_stops_at_the_long_line_too(tmp_path):
    # Claude Code transcripts are read by their format's own reader (not iter_records): the same batcher.
    source = DATA / "formats" / "claude-code" / "7f3c2a1e-5b8d-4e6f-9a0b-1c2d3e4f5a6b.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(b"".join(lines[:3]) + b'{"type":"summary","summary":"' + b"x" * 4096 + b'"}\n'
                           + b"".join(lines[3:]))
    assert CliRunner().invoke(cli, ["import", "--from", "claude-code", str(transcript)]).exit_code == 0
    result = run(["import", "--max-line-bytes", "1KiB", str(transcript)])
    assert result.returncode == 2
    assert b"session.jsonl:4:1: error: $: line 4 is longer than 1 KiB (--max-line-bytes): not read" in \
        result.stdout + result.stderr


def test_a_yaml_case_file_over_the_file_limit_is_refused_not_parsed(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "cases.yaml").write_text("".join(f"- id: c{n}\n  criteria: x\n  input: hello\n" for n in range(100)))
    (tmp_path / "e.yaml").write_text("tests: ./cases.yaml\n")
    assert CliRunner().invoke(cli, ["validate", str(tmp_path / "e.yaml")]).exit_code == 0
    result = CliRunner().invoke(cli, ["validate", "--max-file-bytes", "1KiB", str(tmp_path / "e.yaml")])
    assert result.exit_code == 1
    assert "cases.yaml cannot be read: the file is larger than 1 KiB (--max-file-bytes): not read " \
        "(split it, or raise --max-file-bytes" in result.output


def test_a_huge_file_limit_reads_a_referenced_file_a_part_at_a_time(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "notes.md").write_text("remember the milk\n")
    (tmp_path / "e.yaml").write_text("tests:\n  - id: a\n    criteria: x\n    input:\n      - role: user\n"
                                     "        content:\n          - type: file\n            value: notes.md\n")
    result = run(["prompt", "--max-file-bytes", "1000000GiB", str(tmp_path / "e.yaml")])
    assert result.returncode == 0, result.stderr.decode()
    assert b"remember the milk" in result.stdout


@pytest.mark.parametrize("value, size", [("1048576", 1 << 20), ("64MiB", 64 << 20), ("64MB", 64_000_000),
                                         ("1.5KiB", 1536), ("2k", 2048),
                                         ("9007199254740993", 9007199254740993)])
def test_every_size_option_reads_a_size_alike(value, size):
    from chatconv.cli.limits import SIZE
    from chatconv.cli.recordings import tools

    [memory] = [option for option in tools.params if option.name == "max_memory"]
    assert memory.type is SIZE  # --max-memory reads sizes as --max-line-bytes does
    assert SIZE.convert(value, None, None) == size
