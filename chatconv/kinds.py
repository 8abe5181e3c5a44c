"""Record kinds: their names and short aliases, how a record's kind is told from its content
(an eval file is one that an era of eras/ recognises), and the one list of config file names
(validate tells a config by it; prompt finds one by it).
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Any

from .eras import ERAS, Era, era_of
from .eras.releases import EVAL_FILES_BY_NAME, Release
from .schemas import load_schema, schema_names

RECORDING_KINDS = {"step-record", "conversation", "conversation-step", "model-message"}
KIND_ALIASES = {"step": "step-record", "eval": "eval-file", "prompt": "chat-prompt"}
# Config files, nearest first in each folder: prompt takes the first it finds walking up, and
# validate reads a file of one of these names as a config.
CONFIG_FILE_NAMES = (".agentv/config.yaml", ".agentv/config.yml", ".agentv/config.json", "chatconv.yaml",
                     "chatconv.yml")
# Names that make a file an eval file to AgentV whatever it holds: its validate takes `*.eval.yaml`
# (v4 on) and `suite.yaml` (since 2026-07), its loader `eval.yaml` and `EVAL.yaml`. A file so named
# whose keys tell no era is checked as an eval file of the newest era, as AgentV checks it, never
# passed over: a mistyped case list must not pass CI.
EVAL_FILE_NAMES = ("*.eval.yaml", "*.eval.yml", "suite.yaml", "suite.yml", "eval.yaml", "eval.yml", "EVAL.yaml",
                   "EVAL.yml")


def kind_names() -> list[str]:
    """The kinds `--kind` accepts: every current schema, and a few short aliases."""
    return [n for n in schema_names() if not n.startswith("legacy/")] + sorted(KIND_ALIASES)


def canonical_kind(kind: str) -> str:
    """The schema name of a kind or alias; KeyError names the known ones."""
    kind = KIND_ALIASES.get(kind, kind)
    load_schema(kind)
    return kind


def checked_kind(kind: str) -> tuple[str, str | None]:
    """The kind a record given as `kind` is checked as, and the era that forces (an era's name):
    an era's eval schema (`eval-tests`) is an eval file of that era, and an era's config schema a
    config, so that they get every check of their kind, not the schema's alone."""
    kind = canonical_kind(kind)
    for era in ERAS:
        if kind == era.CONFIG_SCHEMA:
            return "config", None  # a config's era is told from its keys (config_era)
        if kind == era.SCHEMA:
            return "eval-file", None if kind == "eval-file" else era.NAME  # eval-file: each file's own era
    return kind, None


def detect_kind(data: Any, file: str = "") -> str | None:
    """The record kind, told from the content (and, for config files, the file name when given;
    validate tells a config once per file, not per record)."""
    if file and is_config_file(file):
        return "config"  # whatever its keys: a config's unknown keys are warnings (SPEC §1a)
    if isinstance(data, dict):
        if "steps" in data:
            return "conversation"
        if "stepIndex" in data or ("input" in data and "output" in data):
            return "step-record"
        if era_of(data) is not None:
            return "eval-file"
        if "question" in data:
            return "provider-request"
        if data and set(data) <= {"$schema", "guideline_patterns"}:
            return "config"
    if isinstance(data, list) and data and all(isinstance(m, dict) and "role" in m for m in data):
        return "chat-prompt"
    return None


@lru_cache(maxsize=64)  # a file's records ask in turn: the name is parsed once
def is_config_file(file: str | Path) -> bool:
    """Whether a file's name (with its folder's, for `.agentv/`) is one of CONFIG_FILE_NAMES."""
    parts = Path(file).parts
    return "/".join(parts[-1:]) in CONFIG_FILE_NAMES or "/".join(parts[-2:]) in CONFIG_FILE_NAMES


def is_eval_file_name(file: str | Path, release: Release | None = None) -> bool:
    """Whether a file's name is one of EVAL_FILE_NAMES (case counts, as for AgentV); for a
    `tests`-era release before releases.EVAL_FILES_BY_NAME, any YAML file outside `.agentv/`."""
    path = Path(file)
    if release is not None and release.era == "tests" and release.before(EVAL_FILES_BY_NAME):
        return path.suffix in (".yaml", ".yml") and ".agentv" not in path.parts
    return any(fnmatchcase(path.name, pattern) for pattern in EVAL_FILE_NAMES)


def config_era(data: Any) -> Era:
    """The era a config file is written in: the newest whose config schema knows every key of
    it; else the one that knows most of them (the newer on a tie), so that a key chatconv reads
    (`guideline_patterns`) is not called unknown beside a key no era knows. The keys of
    `execution` count too: `trace_file` there is the tests era's, which current AgentV refuses."""
    keys = _config_keys(data)
    return max(reversed(ERAS), key=lambda era: len(keys & _known_config_keys(era.CONFIG_SCHEMA)))


def _config_keys(config: Any) -> set[str]:
    """A config's keys, and those of its `execution` written `execution.KEY`."""
    if not isinstance(config, dict):
        return set()
    execution = config.get("execution")
    return set(config) | {f"execution.{key}" for key in (execution if isinstance(execution, dict) else ())}


@lru_cache(maxsize=None)
def _known_config_keys(schema: str) -> frozenset[str]:
    """The keys a config schema knows, as _config_keys writes them (once per schema: a folder's
    files ask for their config's era one by one)."""
    properties = dict(load_schema(schema).get("properties", {}))
    if "execution" in properties:
        properties["execution"] = properties["execution"].get("properties", {})
    return frozenset(_config_keys(properties))
