"""Models of the eval and config files of the eras other than the internal shape (SPEC §1a).

Their schemas are large and mostly open (graders, workspaces, providers are AgentV's to check),
so a model holds the file as written, checked by its era's schema, rather than a typed copy
of every key: prompts read such files through cases/, which maps each era to one case.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import RootModel, model_validator

from ..problems import json_path
from ..schemas import explaining_validator, fast_validator


class EraFile(RootModel[Any]):
    """A file of one era (SCHEMA names its schema), kept as written once its schema accepts it."""

    SCHEMA: ClassVar[str]

    @model_validator(mode="after")
    def _check(self) -> EraFile:
        if not fast_validator(self.SCHEMA).is_valid(self.root):
            from jsonschema.exceptions import best_match

            try:
                error = best_match(explaining_validator(self.SCHEMA).iter_errors(self.root))
            except RecursionError:  # the explaining validator recurses once per level of nesting
                raise ValueError(f"does not match the {self.SCHEMA} schema, nested too deeply to explain") from None
            raise ValueError(f"{json_path(error.absolute_path)}: does not match the {self.SCHEMA} schema "
                             f"({error.validator})")
        return self


class EvalFileTestcases(EraFile):
    """An eval file of the `testcases` era (AgentV v1)."""

    SCHEMA = "eval-testcases"


class EvalFileTests(EraFile):
    """An eval file of the `tests` era (AgentV v3 to v4.42)."""

    SCHEMA = "eval-tests"


class EvalFileCurrent(EraFile):
    """An eval file of the current era (AgentV since 2026-07)."""

    SCHEMA = "eval-current"


class ConfigTests(EraFile):
    """A config file of the `tests` era."""

    SCHEMA = "config-tests"


class ConfigCurrent(EraFile):
    """A config file of the current era."""

    SCHEMA = "config-current"
