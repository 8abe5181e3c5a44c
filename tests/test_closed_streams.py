"""A standard stream closed when chatconv starts (`>&-`, `2>&-`, `<&-`) ends in a message on
the stream left and exit status 2, never a traceback; closed standard input only when read."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import RECORDED

STEPS = str(RECORDED / "demand-letter-steps.jsonl")


def run_closed(fd: int, *args):
    return subprocess.run([sys.executable, "-m", "chatconv", *args], capture_output=True, timeout=60,
                          preexec_fn=lambda: os.close(fd))


@pytest.mark.parametrize("args", [["validate", STEPS], ["text", STEPS]])
def test_closed_standard_output_is_said_on_standard_error(args):
    run = run_closed(1, *args)
    assert run.returncode == 2
    assert run.stderr == b"chatconv: error: standard output is closed: nothing could be written " \
                         b"(redirect it to a file or /dev/null)\n"


def test_closed_standard_error_is_said_on_standard_output():
    run = run_closed(2, "validate", STEPS)
    assert run.returncode == 2 and run.stdout.startswith(b"chatconv: error: standard error is closed")


@pytest.mark.parametrize("command", ["text", "validate", "migrate"])
def test_closed_standard_input_is_an_error_when_read(command):
    run = run_closed(0, command, "-")
    assert run.returncode == 2, run.stderr
    assert b"standard input is closed" in run.stderr and b"Traceback" not in run.stderr


def test_closed_standard_input_unread_is_no_matter():
    run = run_closed(0, "validate", STEPS)
    assert run.returncode == 0 and b"1 file, 3 records" in run.stdout
