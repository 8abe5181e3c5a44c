"""The public API: every name the package exports is there, defined by the module the map names
as its owner (or re-exported by it from a lower package), and importing the package loads
nothing else (the command's start-up pays only for what it uses)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import chatconv


# Names the map gives to a package that re-exports them from a lower one, where they are defined.
RE_EXPORTED = {"conversation_messages": "chatconv.messages"}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_every_exported_name_is_defined_by_its_owner_or_deliberately_re_exported():
    for name in chatconv.__all__:
        value = getattr(chatconv, name)  # importable from the package
        owner = chatconv._MODULE_OF[name]
        defined_in = getattr(value, "__module__", None)
        if defined_in is None:  # a constant (CODES, FORMATS): no record of where it was made
            assert value is getattr(sys.modules[owner], name), name
        elif name in RE_EXPORTED:
            assert _within(defined_in, RE_EXPORTED[name]), name
            assert name in sys.modules[owner].__all__, name
        else:
            assert _within(defined_in, owner), f"{name} is defined in {defined_in}, not in {owner}"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_function"):
        chatconv.no_such_function


def test_importing_the_package_loads_no_submodule():
    code = "import chatconv, sys; print(sorted(m for m in sys.modules if m.startswith('chatconv.')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def legacy_step() -> dict:
    return {"stepIndex": 0, "input": {"role": "user", "content": "hi"},
            "output": {"role": "assistant", "content": "hello"}}  # output one message: migration 0001


def test_the_library_works_from_the_package_alone():
    [problem] = chatconv.validate_record(legacy_step())
    assert problem.severity == "warning" and problem.code == "legacy-shape" and "0001" in problem.hint
    migrated, applied = chatconv.migrate_record(legacy_step())
    assert applied == ["0001_step_output_array"] and migrated["output"] == [{"role": "assistant", "content": "hello"}]
    assert chatconv.extract_text_from_messages(chatconv.normalize_output(migrated["output"])) == "hello"
