"""The environment in eval files, as AgentV puts it in before it reads one; chatconv checks, and
builds the prompts of, what AgentV then reads.

- `tests` era (v3 to v4.42): every string has each `${{ NAME }}` replaced by the environment
  variable NAME, or by nothing where NAME is unset (so `criteria: "${{ UNSET }}"` is an empty
  criteria, which AgentV refuses).
- current era: every string has each `{{ env.… }}` rendered as a template with `env` (the
  environment, and AGENTV_REPO_ROOT the repository root unless set), `default(...)` and all; a
  string that is one such expression and nothing else becomes a boolean or a number when its
  value reads as one; a string holding `${{` is left as it is (AgentV's validate says why).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any, Mapping

from ..sources import Record

_REFERENCE = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_ENV_EXPRESSION = re.compile(r"\{\{\s*env\.[\s\S]*?\}\}")
_WHOLE_ENV_EXPRESSION = re.compile(r"^\s*\{\{\s*env\.[\s\S]*?\}\}\s*$")
_NUMBER = re.compile(r"^-?(?:0|[1-9]\d*)(?:\.\d+)?$")


def with_environment(record: Record, environ: Mapping[str, str] | None = None, typed: bool = True) -> Record:
    """The record as AgentV reads it once the environment is put in; the record itself when it
    names no variable (its positions hold either way: no key or list changes). typed: a string
    that is one `${{ NAME }}` alone becomes a boolean or a number when its value reads as one
    (v4 does so, v3.8.0 does not)."""
    environ = os.environ if environ is None else environ

    def put_in(text: str) -> Any:
        if "${{" not in text:
            return text
        value = _REFERENCE.sub(lambda match: environ.get(match.group(1), ""), text)
        return _typed(value) if typed and _REFERENCE.fullmatch(text) else value

    data = _walk(record.data, put_in)
    return record if data is record.data else replace(record, data=data)


def _typed(value: str) -> Any:
    """AgentV's reading of a whole value put in from the environment: true, false, a number."""
    if value in ("true", "false"):
        return value == "true"
    if _NUMBER.match(value):
        return float(value) if "." in value else int(value)
    return value


def with_env_templates(record: Record, root: str, environ: Mapping[str, str] | None = None) -> Record:
    """A current-era record as AgentV reads it once `{{ env.… }}` is rendered (see above; `root`
    is the repository root); the record itself when it holds none."""
    env = dict(os.environ if environ is None else environ)
    env.setdefault("AGENTV_REPO_ROOT", root)
    data = _walk(record.data, lambda text: _env_rendered(text, env))
    return record if data is record.data else replace(record, data=data)


def _env_rendered(text: str, env: dict) -> Any:
    if "env." not in text or "${{" in text:
        return text
    # Here: Jinja2 loads only for a file that holds an env expression (validate of recordings,
    # and its workers, start without it).
    from .templates import TemplateProblem, render_string

    try:
        rendered = _ENV_EXPRESSION.sub(lambda match: str(render_string(match.group(), {"env": env})), text)
    except TemplateProblem:
        return text  # a broken expression: left for the template's own check to report
    if rendered == text or not _WHOLE_ENV_EXPRESSION.match(text) or len(_ENV_EXPRESSION.findall(text)) != 1:
        return rendered  # only one expression alone is the whole value: "{{ env.A }}.{{ env.B }}" stays text
    return _typed(rendered)


def _walk(value: Any, change) -> Any:
    """`value` with `change` applied to each string; the same object where nothing changed."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        changed = {key: _walk(item, change) for key, item in value.items()}
        return value if all(changed[key] is item for key, item in value.items()) else changed
    if isinstance(value, list):
        changed_list = [_walk(item, change) for item in value]
        return value if all(new is old for new, old in zip(changed_list, value)) else changed_list
    return value
