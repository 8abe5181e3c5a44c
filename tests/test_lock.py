"""The test environment's lock (tests/constraints.txt) pins every dependency within pyproject.toml's
bounds, and the README's test command and .ci/run install with it."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from conftest import REPO

# .ci/newest runs the suite on the lock it is about to write
LOCK = Path(os.environ.get("CHATCONV_TEST_LOCK", REPO / "tests" / "constraints.txt"))
INSTALL_WITH_LOCK = 'PIP_CONSTRAINT=tests/constraints.txt {pip} install ".[test]"'


def _pins() -> dict[str, Version]:
    pins = {}
    for number, line in enumerate(LOCK.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, equals, version = line.partition("==")
        assert equals and re.fullmatch(r"[A-Za-z0-9._-]+", name), f"{LOCK}:{number}: not name==version: {line}"
        assert canonicalize_name(name) not in pins, f"{LOCK}:{number}: {name} pinned twice"
        pins[canonicalize_name(name)] = Version(version)
    return pins


def _declared() -> list[Requirement]:
    """Every requirement pyproject.toml declares: the build backend, the package's, its extras'."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    declared = list(project["build-system"]["requires"]) + list(project["project"]["dependencies"])
    for extra in project["project"]["optional-dependencies"].values():
        declared += extra
    return [Requirement(text) for text in declared if Requirement(text).name != "chatconv"]


def test_the_lock_pins_every_dependency_within_its_declared_bounds():
    pins = _pins()
    for requirement in _declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in the lock: run bash .ci/newest --lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"the lock's {requirement.name}=={pins[name]} is outside pyproject.toml's {requirement}")


def test_the_readme_and_ci_install_the_tests_with_the_lock():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    assert INSTALL_WITH_LOCK.format(pip=".venv/bin/pip") in readme[:1500]  # the command near the top
    assert INSTALL_WITH_LOCK.format(pip='"$venv/bin/pip"').replace(" install", " install --quiet") in ci
