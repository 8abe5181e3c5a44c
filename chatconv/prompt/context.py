"""An eval file's context for its prompts: the repository root its files are looked up to, the
guideline patterns (from the caller, the file, or the nearest config file), and where a JSON
path of the file is, for problems.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..cases import Case, Source
from ..problems import ChatconvError, Problem
from ..references import check_patterns, find_config, find_repo_root
from ..sources import Position, iter_records
from ..validate import LineOptions, record_entry

if TYPE_CHECKING:
    from .convert import PromptOptions


@dataclass
class EvalFileContext:
    """Where a case's files are looked up, and which of them are guidelines."""

    path: Path
    root: Path
    patterns: list[str]
    metadata: dict = field(default_factory=dict)
    locate: Callable[[tuple], Position] | None = None  # a JSON path's line and column, for problems
    warnings: list[Problem] = field(default_factory=list)  # the config file's, when its patterns are used

    @classmethod
    def for_file(cls, path: Path, data: dict, options: PromptOptions,
                 locate: Callable[[tuple], Position] | None = None) -> EvalFileContext:
        root = find_repo_root(path.parent)
        warnings: list[Problem] = []
        if options.guideline_patterns is not None:
            patterns = check_patterns(options.guideline_patterns, "--guideline-pattern")
        elif "guideline_patterns" in data:
            patterns = check_patterns(data["guideline_patterns"], str(path))
        else:
            config = find_config(path.parent, root)
            patterns, warnings = read_config(config) if config else ([], [])
        return cls(path, root, patterns, data.get("metadata") or {}, locate, warnings)

    def case_system_prompt(self, case: Case | dict, options: PromptOptions) -> str | None:
        """The case's metadata prompt, else the file's, else the one given from outside."""
        metadata = case.metadata if isinstance(case, Case) else case.get("metadata")
        return ((metadata or {}).get("systemPrompt") or self.metadata.get("systemPrompt")
                or options.system_prompt)

    @property
    def source(self) -> Source:
        """The eval file, for problems at its JSON paths."""
        return Source(str(self.path), self.locate)


def config_patterns(config: Path) -> list[str]:
    """The guideline patterns of a config file, which must be valid as validate checks it."""
    return read_config(config)[0]


def read_config(config: Path) -> tuple[list[str], list[Problem]]:
    """The guideline patterns of a config file and its warnings; ChatconvError lists its
    problems when validate finds an error in it.

    The config is checked by validate's own check of a config file (record_entry, as
    `chatconv validate chatconv.yaml` runs it): what the YAML reader found (an unsupported tag,
    a repeated key), the schema, the patterns. Unknown keys are warnings (SPEC §1a,
    `unknown-config-key`): a later era's config keys do not stop the prompts below it. Nor do
    errors in what prompts never read (providers, execution): AgentV's loader too goes on past
    a config it cannot take, with a warning; they come back as warnings here."""
    [record] = iter_records(config)
    options = LineOptions(str(config), "config", explicit=True, skip_unknown=False, allow_outside_root=False)
    problems = [p if _read_by_prompts(p) else replace(p, severity="warning")
                for p in record_entry(record, record, options, first=True).problems]
    if any(p.is_error for p in problems):
        raise ChatconvError(problems)
    return list(record.data.get("guideline_patterns", [])), problems  # its globs checked above: sound


def _read_by_prompts(problem: Problem) -> bool:
    """Whether a config's problem is in what prompts read of it: the file as a whole, or its
    guideline patterns."""
    return problem.path == "$" or problem.path.startswith("$.guideline_patterns")
