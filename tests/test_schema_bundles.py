"""The bundled schemas are the schemas, for tools that take one file: check-jsonschema and
Python's `jsonschema`, given a bundle and nothing else (no registry, no network), give the
verdict `chatconv validate` gives, on every example and on generated valid and broken records.

`chatconv validate` also checks what no schema can say (file references, tool calls paired with
their results, unique case ids, a YAML file's tags and repeated keys), and it reads a legacy shape
as upgraded (a warning). What is compared is its schema verdict: whether its schema step reported
anything (schema_verdict below), which is what a schema-only tool can know.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.exceptions import Unresolvable

from chatconv.cli import cli
from chatconv.eras import era_of
from chatconv.kinds import config_era, detect_kind
from chatconv.schemas import bundle_text, bundled_schema, load_schema, schema_names, schema_uri
from chatconv.sources import Record
from chatconv.sources import discover, iter_records
from chatconv.validate import validate_path
from chatconv.validate.schema import check_schema
from conftest import DATA, REPO, run_chatconv
from test_models import instances, mutated, mutations

BUNDLED = REPO / "schemas-bundled"
# The tests era's instances take about a second each to generate (tests/test_models.py): left out
# of the generated ones here, where every example must be cheap; its real files are all checked.
GENERATED_KINDS = ["model-message", "step-record", "conversation", "eval-file", "eval-testcases", "eval-current",
                   "config-current", "chat-prompt"]
# Written to files for check-jsonschema: kinds whose schemas the real files use too. (A config's
# schema is told from its keys, so a generated config-current may be checked as config-tests.)
FILE_KINDS = ["step-record", "conversation", "eval-file", "eval-current"]


@cache
def offline_validator(name: str) -> Draft202012Validator:
    """Python's jsonschema on the bundle alone: an empty registry, which retrieves nothing."""
    return Draft202012Validator(bundled_schema(name), registry=Registry())


def schema_verdict(data: Any, name: str) -> bool:
    """Whether the record fits schema `name` as written, by validate's own schema step (the fast
    check, legacy shapes read as upgraded and reported, every error explained)."""
    return not check_schema(Record("<generated>", 1, copy.deepcopy(data)), name)


# The bundles on disk -------------------------------------------------------------------------


def test_committed_bundles_are_the_ones_chatconv_generates():
    committed = {path.relative_to(BUNDLED).with_suffix("").as_posix(): path for path in BUNDLED.rglob("*.json")}
    stale = sorted(name for name in set(committed) | set(schema_names())
                   if name not in committed or name not in schema_names()
                   or committed[name].read_text(encoding="utf-8") != bundle_text(name))
    assert not stale, (f"schemas-bundled/ is out of date for {stale}: run `chatconv schema --write-to "
                       "schemas-bundled` (delete the files of schemas that are gone) and commit it")


def test_a_schema_as_written_needs_the_network_and_its_bundle_does_not():
    # What the bundles are for: the cross-file $refs of the schemas as written point at a host
    # nobody serves, so an offline validator cannot even start on a record.
    record = {"stepIndex": 0, "input": {"role": "user", "content": "hi"}, "output": []}
    with pytest.raises(Unresolvable):
        Draft202012Validator(load_schema("step-record"), registry=Registry()).is_valid(record)
    assert offline_validator("step-record").is_valid(record)
    assert not offline_validator("step-record").is_valid({**record, "stepIndex": -1})


@pytest.mark.parametrize("name", schema_names())
def test_a_bundle_names_its_schema_for_editors(name):
    bundle = bundled_schema(name)
    Draft202012Validator.check_schema(bundle)
    assert bundle["title"] == load_schema(name)["title"]
    assert bundle["$id"].endswith(f"/{name}.json") and bundle["$id"] != schema_uri(name)  # no clash with the source
    refs = re.findall(r'"\$ref": "([^"]*)"', json.dumps(bundle))
    assert refs and all(ref.startswith("#/$defs/") for ref in refs)  # no $ref leaves the file


def test_a_pattern_reads_alike_in_python_and_in_chatconv():
    # Python's `$` matches before a final newline, ECMA-262's (chatconv's, check-jsonschema's,
    # an editor's) does not: the bundle's pattern forbids it, so all give one verdict.
    step = {"stepIndex": 0, "input": {"role": "user", "content": "hi"}, "output": []}
    for timestamp, valid in [("2025-11-09T19:27:09.514Z", True), ("2025-11-09T19:27:09.514Z\n", False)]:
        record = {**step, "timestamp": timestamp}
        assert offline_validator("step-record").is_valid(record) == schema_verdict(record, "step-record") == valid


# The command -----------------------------------------------------------------------------


def test_schema_bundle_prints_the_bundle_of_a_short_kind_too():
    result = run_chatconv("schema", "step", "--bundle")
    assert result.returncode == 0, result.stderr_text
    assert result.stdout_text == bundle_text("step-record")
    assert json.loads(result.stdout_text)["title"] == "Step record"
    nameless = run_chatconv("schema", "--bundle")
    assert nameless.returncode == 2 and "name it" in nameless.stderr_text


def test_write_to_writes_every_bundle_and_replaces_old_ones(tmp_path):
    out = tmp_path / "repo" / "schemas"
    (out / "legacy").mkdir(parents=True)
    (out / "legacy" / "model-message-v4.json").write_text("stale")
    result = run_chatconv("schema", "--write-to", out)
    assert result.returncode == 0, result.stderr_text
    written = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file())
    assert written == sorted(f"{name}.json" for name in schema_names())  # no temporary file left
    assert result.stdout_text.splitlines() == [f"wrote {out / name}.json" for name in schema_names()]
    for name in schema_names():
        assert (out / f"{name}.json").read_text(encoding="utf-8") == bundle_text(name)
    one = CliRunner().invoke(cli, ["schema", "step", "--write-to", str(tmp_path / "one")])
    assert one.exit_code == 0 and [p.name for p in (tmp_path / "one").iterdir()] == ["step-record.json"]


def test_write_to_a_place_that_cannot_hold_a_folder_is_a_clear_error(tmp_path):
    file = tmp_path / "taken"
    file.write_text("")
    for target, says in [(file, "is a file; give a folder"), (file / "sub", "cannot write here"),
                         ("", "--write-to names no folder")]:
        result = run_chatconv("schema", "--write-to", target, cwd=tmp_path)  # run_chatconv fails on a traceback
        assert result.returncode == 2 and says in result.stderr_text, result.stderr_text
        assert result.stdout_text == ""
    assert [path.name for path in tmp_path.iterdir()] == ["taken"]  # nothing written in the current folder


# Python's jsonschema offline: a property ---------------------------------------------------


def test_python_jsonschema_on_a_bundle_agrees_with_chatconv():
    verdicts = []

    # A failure notes its record's kind and change; shrinking a whole broken record takes minutes.
    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
              phases=[Phase.explicit, Phase.reuse, Phase.generate])
    @given(data=st.data())
    def check(data):
        kind = data.draw(st.sampled_from(GENERATED_KINDS), label="kind")
        record = data.draw(instances(kind), label="valid record")
        bundle = bundled_schema(kind)
        # Unknown keys too: chatconv warns about them in recordings; a schema-only tool refuses them.
        found = list(mutations(bundle, bundle, record, unknown_keys=True))
        if found and data.draw(st.booleans(), label="broken"):
            change, path, new = data.draw(st.sampled_from(found), label="change")
            record = mutated(record, path, new)
            note(f"{change} at {path}")
        verdict = offline_validator(kind).is_valid(record)
        assert verdict == schema_verdict(record, kind)
        verdicts.append(verdict)

    check()
    assert set(verdicts) == {True, False}  # both were put to the test


# check-jsonschema on files ---------------------------------------------------------------


def real_files(tmp_path: Path) -> dict[Path, str]:
    """The files validate reads in the examples and the test data, each with the schema it is
    checked against (an eval file's era's, a config's era's); a JSONL file's lines become one
    JSON file each, as check-jsonschema reads one document a file."""
    checked = {}
    for file, _ in discover([REPO / "examples", DATA / "recorded", DATA / "agentv"]):
        records = list(iter_records(file))
        kinds = [detect_kind(record.data, file) for record in records]
        if not records or kinds[0] is None:
            continue  # validate skips it: not a chatconv record
        if file.endswith(".jsonl"):
            for record, kind in zip(records, kinds):
                line = tmp_path / f"{Path(file).stem}-{record.line}.json"
                line.write_text(json.dumps(record.data), encoding="utf-8")
                checked[line] = kind
        else:
            [record] = records
            checked[Path(file)] = schema_of(record.data, kinds[0])
    return checked


def schema_of(data: Any, kind: str) -> str:
    """The schema validate checks a record of `kind` against."""
    if kind == "eval-file":
        return era_of(data).SCHEMA
    return config_era(data).CONFIG_SCHEMA if kind == "config" else kind


def generated_files(tmp_path: Path) -> dict[Path, str]:
    """A few valid and broken records of each kind, the same ones every run (derandomized)."""
    made: dict[Path, str] = {}
    for kind in FILE_KINDS:
        @settings(max_examples=6, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), phases=[Phase.generate])
        @given(data=st.data())
        def make(data):
            record = data.draw(instances(kind))
            bundle = bundled_schema(kind)
            found = list(mutations(bundle, bundle, record, unknown_keys=True))
            if found and data.draw(st.booleans()):
                _, path, new = data.draw(st.sampled_from(found))
                record = mutated(record, path, new)
            file = tmp_path / f"{kind}-{len(made)}.json"
            file.write_text(json.dumps(record), encoding="utf-8")
            made[file] = kind

        make()
    return made


# check-jsonschema's command line (the `main` its executable runs), once for each schema, all in
# one process: one start-up (about half a second) for every file, not one for each schema.
CHECK_JSONSCHEMA = """
import contextlib, io, json, sys
from check_jsonschema import main
reports = {}
for name, argv in json.load(sys.stdin).items():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main(argv)
        except SystemExit as exit:
            reports[name] = [exit.code, out.getvalue()]
print(json.dumps(reports))
"""


def check_jsonschema_invalid(files: dict[Path, str]) -> set[Path]:
    """The files check-jsonschema finds invalid, each checked against its bundle."""
    groups = defaultdict(list)
    for file, name in files.items():
        groups[name].append(str(file))
    argv = {name: ["--output-format", "json", "--schemafile", str(BUNDLED / f"{name}.json"), *group]
            for name, group in groups.items()}
    run = subprocess.run([sys.executable, "-c", CHECK_JSONSCHEMA], input=json.dumps(argv), capture_output=True,
                         text=True, check=True)
    invalid = set()
    for name, (status, output) in json.loads(run.stdout).items():
        report = json.loads(output)
        assert status in (0, 1) and not report.get("parse_errors"), (name, report)
        invalid |= {Path(error["filename"]) for error in report["errors"]}
    return invalid


def validate_says_invalid(file: Path, name: str) -> bool:
    """Whether `chatconv validate FILE --kind NAME` reports a problem from its schema step.

    validate's other checks may use the same codes (a case reader's `wrong-type` for a scenario
    it cannot read, say), so the schema step's problems are found by running it on the records
    as validate reads them, and each is checked to be among what validate reports.
    """
    found = [problem for record in iter_records(file) for problem in check_schema(record, name)]
    reported = {(p.path, p.message, p.code) for p in validate_path(file, kind=name)[0]}
    assert {(p.path, p.message, p.code) for p in found} <= reported, (file, found, reported)
    return bool(found)


def test_check_jsonschema_on_the_bundles_agrees_with_chatconv_validate(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "generated").mkdir()
    real, generated = real_files(tmp_path / "real"), generated_files(tmp_path / "generated")
    assert len(real) > 100 and len({*real.values()}) >= 7, real  # every era's eval files, configs, recordings
    invalid = check_jsonschema_invalid({**real, **generated})
    disagree = [(str(file), name) for file, name in {**real, **generated}.items()
                if (file in invalid) != validate_says_invalid(file, name)]
    assert not disagree
    # Both verdicts occur: broken records among the generated ones, and a real config key that
    # AgentV's schema does not know (a warning to chatconv, an error to a schema-only tool).
    assert invalid & set(generated) and set(generated) - invalid and invalid & set(real)
