"""The checks of a current-era config (`.agentv/config.yaml` since 2026-07) that its schema cannot
state, as AgentV's own validate makes them: the providers file it names exists and holds a list,
no provider is written with `provider` (it is `id` and `label` now), and the default provider
and grader name a configured provider.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..problems import Problem
from ..sources import Record, problem_at
from .referenced import read_named_yaml

_FILE_PREFIX = "file://"
_PROVIDER_KEY = "use providers[].id for the backend and providers[].label for the stable AgentV identity"


def check_config_providers(record: Record, allow_outside_root: bool = False) -> Iterator[Problem]:
    data = record.data if isinstance(record.data, dict) else {}
    providers = data.get("providers")
    in_file = isinstance(providers, str) and providers.startswith(_FILE_PREFIX)
    if in_file:
        providers, problem = _read_providers_file(record, providers, allow_outside_root)
        if problem is not None:
            yield problem
            return
    if not isinstance(providers, list):
        return
    for index, provider in enumerate(providers):
        if isinstance(provider, dict) and "provider" in provider:
            # An entry of the providers file is said at the config's reference to it: that is
            # the record checked, as AgentV names the config in its message.
            path, written = (("providers",), f" in {data['providers']}") if in_file else (
                ("providers", index, "provider"), "")
            yield problem_at(record, path, f"providers[{index}]{written}: 'provider' is not taken by AgentV",
                             hint=_PROVIDER_KEY, code="bad-value")
    yield from _defaults_problems(record, data.get("defaults"), providers)


def _read_providers_file(record: Record, reference: str, allow_outside_root: bool) -> tuple[Any, Problem | None]:
    """The providers a `file://` reference names (from the config's folder, as AgentV reads
    it), or the problem that stops their reading."""
    providers, problem = read_named_yaml(record, ("providers",), reference.removeprefix(_FILE_PREFIX),
                                         "the providers file", allow_outside_root)
    if problem is None and not isinstance(providers, list):
        problem = problem_at(record, ("providers",), f"the providers file {reference} must hold a YAML list",
                             hint="write each provider as a list item: - id: ...", code="bad-value")
    return providers, problem


def _defaults_problems(record: Record, defaults: Any, providers: list) -> Iterator[Problem]:
    """`defaults.provider` and `defaults.grader` must name a configured provider, by label or id."""
    if not isinstance(defaults, dict) or not providers:
        return
    names = {provider[key] for provider in providers if isinstance(provider, dict)
             for key in ("id", "label") if isinstance(provider.get(key), str)}
    for key in ("provider", "grader"):
        value = defaults.get(key)
        if isinstance(value, str) and value not in names:
            yield problem_at(record, ("defaults", key), f"{value!r} does not match a configured provider label or id",
                             hint=f"one of: {', '.join(sorted(names))}" if names else None, code="bad-value")
