"""The built wheel carries the schemas (as written and bundled) and migrations and works from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

from conftest import REPO, RECORDED


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(out), str(REPO)],
                   check=True, capture_output=True)
    [built] = out.glob("chatconv-*.whl")
    return built


def test_wheel_holds_schemas_and_migrations(wheel):
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    for schema in (REPO / "schemas").rglob("*.json"):
        name = schema.relative_to(REPO / "schemas").as_posix()
        assert f"chatconv/_schemas/{name}" in names
        # the bundles too, as generated (tests/test_schema_bundles.py keeps the folder up to date)
        bundled = (REPO / "schemas-bundled" / name).read_bytes()
        assert archive.read(f"chatconv/_schemas_bundled/{name}") == bundled
    for migration in (REPO / "migrations").glob("0*.py"):
        assert f"chatconv/_migrations/{migration.name}" in names


def test_installed_wheel_validates_from_another_folder(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    work = tmp_path / "elsewhere"
    work.mkdir()
    legacy = work / "legacy.jsonl"
    legacy.write_text('{"stepIndex":0,"input":{"role":"user","content":"hi"},'
                      '"output":{"role":"assistant","content":"hello"}}\n')
    env = {**os.environ, "PYTHONPATH": str(target)}
    code = "import chatconv, sys; print(chatconv.__file__); from chatconv.cli import main; main()"
    result = subprocess.run([sys.executable, "-c", code, "validate", str(legacy), str(RECORDED)],
                            cwd=work, env=env, capture_output=True, text=True)
    assert result.stdout.startswith(str(target)), result.stdout + result.stderr  # the wheel's copy ran
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0001_step_output_array" in result.stdout  # the migrations shipped and were found
    assert "6 files, 46 records: 0 errors, 1 warning" in result.stdout
