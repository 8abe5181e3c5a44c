"""Pydantic models of the records under schemas/, for the typed Python API.

The schemas stay the source of truth: tests/test_models.py checks that a schema and its model
accept and reject the same data. Legacy shapes are read as upgraded (by the migrations, as
every command reads them), so a model always holds a record in the current shape.

Dump with `model_dump(mode="json", exclude_unset=True)`: an optional key that was absent stays
absent, and keys come out in the order they were read (unknown ones after the known ones).

base (shared types, key order), eval (eval files, chat prompts, provider requests), recorded
(model messages, steps, conversations). The names below are the package's public API.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, ValidationError

from ..kinds import KIND_ALIASES, canonical_kind, detect_kind, kind_names
from ..migrate import is_legacy, upgrade_record
from ..problems import ChatconvError, Problem
from ..schemas import fast_validator
from ..sources import Record, iter_records, problem_at
from ..validate import check_schema
from .base import EvalRecord, EvalRole, NonEmptyStr, Omittable, ProviderOptions, RecordedRecord, Role, SchemaInt
from .eval import (AnyEvaluator, CaseMetadata, ChatMessage, ChatPrompt, CodeEvaluator, Config, EvalCase, EvalFile,
                   Evaluator, Execution, FileSegment, InputMessage, LlmJudgeEvaluator, OtherEvaluator,
                   ProviderRequest, Segment, TextSegment)
from .eras import ConfigCurrent, EvalFileCurrent, EraFile, EvalFileTestcases, ConfigTests, EvalFileTests
from .recorded import (TIMESTAMP_PATTERN, AnyModelMessage, AssistantMessage, AssistantPart, ContentOutput,
                       Conversation, ConversationStep, FilePart, ImagePart, JsonOutput, MediaItem, ModelMessage,
                       ReasoningPart, StepRecord, SystemMessage, TextItem, TextOutput, TextPart, ToolCallPart,
                       ToolMessage, ToolResultOutput, ToolResultPart, UserMessage, UserPart)

MODELS: dict[str, type[BaseModel]] = {
    "chat-message": ChatMessage,
    "chat-prompt": ChatPrompt,
    "config": Config,
    "config-current": ConfigCurrent,
    "config-tests": ConfigTests,
    "conversation": Conversation,
    "conversation-step": ConversationStep,
    "eval-case": EvalCase,
    "eval-current": EvalFileCurrent,
    "eval-file": EvalFile,
    "eval-testcases": EvalFileTestcases,
    "eval-tests": EvalFileTests,
    "evaluator": Evaluator,
    "input-message": InputMessage,
    "model-message": ModelMessage,
    "provider-request": ProviderRequest,
    "step-record": StepRecord,
}


def parse_record(kind: str, data: Any) -> BaseModel:
    """`data` as the model of `kind` (a schema name or a short alias), legacy shapes read as
    upgraded (`data` itself is left as it is); pydantic.ValidationError when invalid."""
    kind = KIND_ALIASES.get(kind, kind)  # a short kind, as --kind takes it, too
    try:
        model = MODELS[kind]
    except KeyError:
        raise KeyError(f"no model for {kind!r}; known: {', '.join(MODELS)}") from None
    return model.model_validate(_upgraded(data, kind))


def _upgraded(data: Any, kind: str) -> Any:
    # Most records are current: a copy is made only when a migration finds its shape (as
    # upgrade_record would find it first), and only that copy is upgraded.
    # An eval-file model is of one era (its schema's): older files are moved up to it, never past
    # (the registry's rule for a kind that is an era's schema, as validate reads them). As validate
    # does, a record its schema takes is read as it is: `{tests: [], input_files: []}` is a valid
    # current-era file that the tests era's move would otherwise rewrite.
    if not is_legacy(data, kind) or fast_validator(kind).is_valid(data):
        return data
    try:
        return upgrade_record(copy.deepcopy(data), kind)[0]
    except Exception:  # a migration tripped on a shape it did not expect: the model says what is wrong
        return data


def read_records(path: str | Path, kind: str | None = None) -> Iterator[BaseModel]:
    """The records of a file as models, in order: a YAML or JSON document, or each JSONL line
    (`-` is standard input). `kind` is a schema name or a short alias (as `--kind` takes);
    without it each record's kind is told from its content. Legacy shapes are read as upgraded.

    ChatconvError at the first record that cannot be read, whose kind cannot be told, or that
    its model refuses (with the problems worded as `chatconv validate` words them).
    """
    forced = canonical_kind(kind) if kind else None
    for record in iter_records(path):
        errors = [record.error] if record.error else [p for p in record.problems if p.is_error]
        if errors:
            raise ChatconvError(errors)
        record_kind = forced or detect_kind(record.data, record.file)
        if record_kind is None:
            raise ChatconvError(problem_at(record, (), "cannot tell what kind of record this is",
                                           hint=f"pass kind (one of: {', '.join(kind_names())})", code="unknown-kind"))
        try:
            yield parse_record(record_kind, record.data)
        except ValidationError as exc:
            raise ChatconvError(_explained(record, record_kind, exc)) from None


def _explained(record: Record, kind: str, exc: ValidationError) -> list[Problem]:
    """The schema's errors of a record its model refused; they agree (tests/test_models.py), the
    model's own first error stands in should they ever not."""
    errors = [problem for problem in check_schema(record, kind) if problem.is_error]
    first = exc.errors()[0]
    return errors or [problem_at(record, tuple(first["loc"]), first["msg"], code="bad-value")]


__all__ = [
    "MODELS", "TIMESTAMP_PATTERN", "AnyEvaluator", "ConfigCurrent", "EvalFileCurrent", "EraFile",
    "EvalFileTestcases", "ConfigTests", "EvalFileTests", "AnyModelMessage", "AssistantMessage", "AssistantPart",
    "CaseMetadata", "ChatMessage", "ChatPrompt", "CodeEvaluator", "Config", "ContentOutput", "Conversation",
    "ConversationStep", "EvalCase", "EvalFile", "EvalRecord", "Evaluator", "Execution", "FilePart", "FileSegment",
    "ImagePart", "InputMessage", "JsonOutput", "LlmJudgeEvaluator", "MediaItem", "ModelMessage", "NonEmptyStr",
    "Omittable", "OtherEvaluator", "ProviderOptions", "ProviderRequest", "ReasoningPart", "RecordedRecord", "Role", "EvalRole",
    "SchemaInt", "Segment", "StepRecord", "SystemMessage", "TextItem", "TextOutput", "TextPart", "TextSegment",
    "ToolCallPart", "ToolMessage", "ToolResultOutput", "ToolResultPart", "UserMessage", "UserPart", "parse_record",
    "read_records",
]
