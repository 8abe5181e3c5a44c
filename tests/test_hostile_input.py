"""The attack on every command, kept: a folder of hostile files (cut, mis-encoded, too deep,
wrong types, escape sequences in names and values, a decompression bomb, broken YAML, alias and
template bombs, a folder and a link loop named like data, .gitignore lines git skips) read by
each command at once. None may end in a traceback, hang, write a control character raw where a
person reads it, or stop before the files after a bad one (issue 31's table, as a test)."""

from __future__ import annotations

import gzip
import json
import os
import re
import time

import pytest
import zstandard

from conftest import run_chatconv

_STEP = {"conversationId": "c", "stepIndex": 0, "input": {"role": "user", "content": "x"}, "output": []}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    (folder / ".git").mkdir()
    files = {
        "empty.jsonl": b"",
        "blank.jsonl": b"\n\n  \n",
        "truncated.jsonl": json.dumps(_STEP).encode()[:-9],
        "latin1.jsonl": '{"conversationId": "caf\xe9", "stepIndex": 0}\n'.encode("latin-1"),
        "bom.jsonl": b"\xef\xbb\xbf" + json.dumps(_STEP).encode() + b"\n",
        "nul.jsonl": b'{"a": "\x00"}\n\x00\x00\n',
        "deep.jsonl": b"[" * 2000 + b"]" * 2000 + b"\n",
        "bigint.jsonl": json.dumps({**_STEP, "stepIndex": 123456789012345678901234567890}).encode() + b"\n",
        "types.jsonl": b'{"conversationId": 5, "stepIndex": "0", "input": [], "output": {}}\n[1, 2]\n"text"\nnull\n',
        "escapes\x1b[31m\a.jsonl": json.dumps({**_STEP, "conversationId": "c\x1b]0;t\a", "input": {
            "role": "user\x1b[2J", "content": "x\x1b[5m"}, "output": [{"role": "assistant", "content": "\a"}]}).encode(),
        "crlf.jsonl": json.dumps(_STEP).encode() + b"\r\n",
        "broken.yaml": b"tests: [\n  - id: a\n  b: {\n",
        "alias.yaml": b"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                      b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                      b"e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
        "notgzip.jsonl.gz": b"plain text, not gzip\n",
        "cut.jsonl.gz": gzip.compress(json.dumps(_STEP).encode() + b"\n" * 1000)[:-20],
        "bomb.jsonl.zst": zstandard.ZstdCompressor(level=19).compress(b"\n" * (32 << 20)),
        "array.json": b'[{"messages": [{"role": "user", "content": "hi"}]}, 5, "x", '
                      b'{"contents": [{"role": ["user"], "parts": []}]}]',
        "loops.eval.yaml": b"prompts:\n  - \"{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}"
                           b"{% endfor %}{{ 'a' * 10**10 }}\"\ntests:\n  - id: t\n    vars: {input: x}\n"
                           b"    assert: [{type: contains, value: x}]\n",
        # A step (what text reads) and a body (what import reads), each saying "last".
        "zz-last.jsonl": json.dumps({**_STEP, "conversationId": "last"}).encode() + b"\n"
                         + json.dumps({"messages": [{"role": "user", "content": "last"}]}).encode() + b"\n",
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    (folder / "dir.jsonl").mkdir()
    os.symlink("loop.jsonl", folder / "loop.jsonl")
    (folder / ".gitignore").write_text("\\\n!\n" + "*a" * 30 + "*b\n")
    return folder


@pytest.mark.parametrize("command", [("validate",), ("validate", "--format", "github"), ("validate", "--format", "json"),
                                     ("text",), ("tools", "--format", "table"), ("dataset",), ("import",),
                                     ("export", "--to", "openai-chat"), ("migrate", "--check")])
def test_every_command_reads_the_hostile_folder_without_a_traceback_a_hang_or_a_raw_control_character(hostile, command):
    started = time.monotonic()
    result = run_chatconv(*command, ".", cwd=hostile, timeout=60)  # (run_chatconv: no traceback)
    assert time.monotonic() - started < 30, command
    assert result.returncode in (1, 2), (command, result.stderr_text[-2000:])
    person_reads = result.stderr_text + ("" if "json" in command else result.stdout_text)
    assert not re.search("[\x1b\a\x00]", person_reads), command
    # The files after a bad one are read: the last file's step (or its check) is there.
    if command[0] in ("text", "import"):
        assert '"last"' in result.stdout_text, command


def test_import_and_export_go_on_past_a_file_they_cannot_read(tmp_path):
    # They stopped at the first: the files after it were not read, the problems found before it not said.
    (tmp_path / "a.jsonl").write_text('{"messages": [{"role": "user", "content": "first"}]}\n{"nope": 1}\n')
    (tmp_path / "b.jsonl.gz").write_bytes(b"not gzip\n")
    (tmp_path / "c.jsonl").write_text('{"messages": [{"role": "user", "content": "last"}]}\n')
    imported = run_chatconv("import", tmp_path)
    assert imported.returncode == 2
    assert "first" in imported.stdout_text and "last" in imported.stdout_text
    assert "a.jsonl:2:1: error" in imported.stderr_text and "b.jsonl.gz" in imported.stderr_text
    steps = tmp_path / "steps"
    steps.mkdir()
    (steps / "s.jsonl").write_text(imported.stdout_text)
    (steps / "t.jsonl.gz").write_bytes(b"not gzip\n")
    exported = run_chatconv("export", steps, "--to", "openai-chat", "--per", "conversation")
    assert exported.returncode == 2 and exported.stdout_text.count("\n") == 2, exported.stderr_text
    assert "t.jsonl.gz" in exported.stderr_text
