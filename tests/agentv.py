"""AgentV's own code as the suite's oracle (tests/oracles/, README there): a release's `validate`,
loader and prompt builder, run with node, asked about the same files chatconv reads."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import DATA

ORACLES = Path(__file__).parent / "oracles"
# AgentV's example trees, each as the release that wrote it shipped them (tests/data/agentv/README.md)
TREES = DATA / "agentv"


def _node() -> tuple[str | None, str]:
    """node's path, or None and why the oracles cannot run (tests/ai_sdk.py uses it too)."""
    node = shutil.which("node")
    if node is None:
        return None, ("node is not installed, so the oracles (AgentV's and the AI SDK's own code) cannot run "
                      "(.ci/run installs it)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    major = re.match(r"v(\d+)", version)
    if not major or int(major.group(1)) < 20:
        return None, f"the oracle bundles need node 20 or later, not {version or 'an unknown version'}"
    return node, ""


NODE, _WHY_NOT = _node()
needs_node = pytest.mark.skipif(NODE is None, reason=_WHY_NOT)


def agentv(version: str, command: str, paths: list[str], root: Path) -> list[dict]:
    """What AgentV `version` (an oracle's label, e.g. "v4.42.4") says of `paths` (relative to
    `root`, the repository root it is given): one object per file, in order."""
    run = subprocess.run([NODE, str(ORACLES / f"agentv-{version}.mjs"), command, "--root", ".", "--portable", *paths],
                         cwd=root, capture_output=True, text=True)
    assert run.returncode == 0, f"the AgentV {version} oracle failed ({run.returncode}): {run.stderr}"
    return [json.loads(line) for line in run.stdout.splitlines()]


def copy_tree(name: str, into: Path) -> Path:
    """AgentV's example tree `name`, copied into its own repository (an empty .git) under `into`:
    a file reference starting with `/` starts at AgentV's repository root."""
    root = into / name
    shutil.copytree(TREES / name, root)
    (root / ".git").mkdir()
    return root


def yaml_files(root: Path) -> list[str]:
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*")
                  if path.suffix in (".yaml", ".yml") and ".git" not in path.parts)


def refused_by_agentv(version: str, paths: list[str], root: Path) -> dict[str, str]:
    """The eval files of `paths` AgentV `version` would not run whole, each with why: its
    `validate` refuses the file, or its loader throws or skips a test or a grader."""
    refused = {line["file"]: "; ".join(e["message"] for e in line["errors"]) or "invalid"
               for line in agentv(version, "validate", paths, root) if not line["valid"]}
    for line in agentv(version, "load", paths, root):
        skipped = [m["text"] for m in line["messages"] if "Skipping" in m["text"]]
        if not line["ok"] or skipped:
            refused.setdefault(line["file"], line["error"] or "; ".join(skipped))
    return refused
