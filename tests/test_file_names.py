"""A file name whose bytes are not UTF-8 is read as any other, and shown with those bytes
escaped (\\xff) in every output: text, JSON, SARIF, GitHub annotations, migrate's lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from chatconv.problems import shown_name
from conftest import RECORDED

BAD = b"bad\xff.jsonl"


@pytest.fixture
def folder(tmp_path):
    steps = (RECORDED / "demand-letter-steps.jsonl").read_bytes()
    (tmp_path / os.fsdecode(BAD)).write_bytes(steps.rstrip(b"\n") + b'\n{"x": 1}\n')  # its steps, then a bad record
    return tmp_path


def chatconv(*args, cwd):
    return subprocess.run([sys.executable, "-m", "chatconv", *args], capture_output=True, cwd=cwd, timeout=60)


def test_validate_json_names_the_file_with_its_byte_escaped(folder):
    run = chatconv("validate", "--format", "json", ".", cwd=folder)
    assert run.returncode == 1, run.stderr
    assert {p["file"] for p in json.loads(run.stdout)["problems"]} == {"./bad\\xff.jsonl"}


@pytest.mark.parametrize("output_format, shown", [("text", b"./bad\\xff.jsonl:4:1: error"),
                                                  ("github", b"::error file=./bad\\xff.jsonl,line=4"),
                                                  ("sarif", b'"uri":"bad%FF.jsonl"')])
def test_every_output_format_shows_the_name(folder, output_format, shown):
    run = chatconv("validate", "--format", output_format, ".", cwd=folder)
    assert run.returncode == 1 and shown in run.stdout, run.stdout + run.stderr
    assert b"Traceback" not in run.stderr


def test_dataset_reads_such_a_file_as_any_other(folder):
    run = chatconv("dataset", ".", cwd=folder)
    steps = len((RECORDED / "demand-letter-steps.jsonl").read_bytes().splitlines())
    assert len(run.stdout.splitlines()) == steps, run.stderr
    assert run.stderr.startswith(b"./bad\\xff.jsonl:4:1: error"), run.stderr


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=12))
def test_shown_names_are_utf8_and_keep_names_that_are(raw):
    name = os.fsdecode(raw)
    shown = shown_name(name)
    shown.encode("utf-8")  # writable to any UTF-8 output
    try:
        raw.decode("utf-8")
        assert shown == name
    except UnicodeDecodeError:
        assert "\\x" in shown
