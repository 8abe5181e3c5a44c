"""Models of eval files (cases, input messages, evaluators, configs), and of the chat prompts
and provider requests built from them: an unknown key is an error, as in the schemas.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, RootModel, StrictStr, Tag

from .base import EvalRecord, EvalRole, NonEmptyStr, Omittable, Role

class TextSegment(EvalRecord):
    """Inline text of an input message."""

    type: Literal["text"]
    value: StrictStr


class FileSegment(EvalRecord):
    """A file whose text is embedded in an input message."""

    type: Literal["file"]
    value: NonEmptyStr


Segment = Annotated[TextSegment | FileSegment, Field(discriminator="type")]


class InputMessage(EvalRecord):
    """One message of an eval case's input_messages or expected_messages."""

    role: EvalRole
    content: StrictStr | list[Segment]


class ExpectedMessage(EvalRecord):
    """One message of an eval case's expected_messages: its content may also be an object (the
    structured answer an agent is expected to return)."""

    role: EvalRole
    content: StrictStr | list[Segment] | dict[str, Any]


class CodeEvaluator(EvalRecord):
    """An evaluator that runs a script."""

    name: NonEmptyStr
    type: Literal["code"]
    script: NonEmptyStr
    cwd: Omittable[StrictStr] = None


class LlmJudgeEvaluator(EvalRecord):
    """An evaluator where a model grades the answer."""

    name: NonEmptyStr
    type: Literal["llm_judge"]
    prompt: Omittable[StrictStr] = None
    model: Omittable[StrictStr] = None


class OtherEvaluator(EvalRecord):
    """An evaluator of a type chatconv does not know; it keeps its own keys."""

    model_config = ConfigDict(extra="allow")

    name: NonEmptyStr
    type: NonEmptyStr


def _evaluator_kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ("code", "llm_judge") else "other"


AnyEvaluator = Annotated[
    Annotated[CodeEvaluator, Tag("code")]
    | Annotated[LlmJudgeEvaluator, Tag("llm_judge")]
    | Annotated[OtherEvaluator, Tag("other")],
    Discriminator(_evaluator_kind),
]


class Evaluator(RootModel[AnyEvaluator]):
    """One evaluator of execution.evaluators, whatever its type."""


class Execution(EvalRecord):
    """How a case, or every case of a file, is run."""

    target: Omittable[StrictStr] = None
    evaluators: Omittable[list[AnyEvaluator]] = None


class CaseMetadata(EvalRecord):
    """Settings that shape a prompt."""

    systemPrompt: Omittable[StrictStr] = None


class EvalCase(EvalRecord):
    """One case of an eval file."""

    id: NonEmptyStr
    outcome: StrictStr
    input_messages: Annotated[list[InputMessage], Field(min_length=1)]
    expected_messages: Omittable[list[ExpectedMessage]] = None
    conversation_id: Omittable[StrictStr] = None
    note: Omittable[StrictStr] = None
    execution: Omittable[Execution] = None
    metadata: Omittable[CaseMetadata] = None


class EvalFile(EvalRecord):
    """A YAML or JSON file of eval cases."""

    schema_: Omittable[StrictStr] = Field(default=None, alias="$schema")
    description: Omittable[StrictStr] = None
    target: Omittable[StrictStr] = None
    execution: Omittable[Execution] = None
    metadata: Omittable[CaseMetadata] = None
    guideline_patterns: Omittable[list[NonEmptyStr]] = None
    evalcases: Annotated[list[EvalCase], Field(min_length=1)]


class Config(EvalRecord):
    """Repository settings (.agentv/config.yaml or chatconv.yaml)."""

    schema_: Omittable[StrictStr] = Field(default=None, alias="$schema")
    guideline_patterns: Omittable[list[NonEmptyStr]] = None


# Chat prompts and provider requests ----------------------------------------------------------


class ChatMessage(EvalRecord):
    """One message of a ChatPrompt."""

    role: Role
    content: StrictStr


class ChatPrompt(RootModel[list[ChatMessage]]):
    """A structured multi-turn prompt."""


class ProviderRequest(EvalRecord):
    """What a run hands a provider."""

    question: StrictStr
    chatPrompt: Omittable[list[ChatMessage]] = None
    guidelines: Omittable[StrictStr | list[StrictStr]] = None
    systemPrompt: Omittable[StrictStr] = None
