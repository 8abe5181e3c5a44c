"""Pydantic models of the records under schemas/, for the typed Python API.

The schemas stay the source of truth: tests/test_models.py checks that a schema and its model
accept and reject the same data. Eval-file records forbid unknown keys (SPEC §1: a misspelt key
is an error); recorded conversations keep them, so that no key is ever dropped.

Dump with `model_dump(mode="json", exclude_unset=True)`: an optional key that was absent stays
absent, and keys come out in the order they were read (unknown ones after the known ones).
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    RootModel,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    Tag,
    model_validator,
)

from chatconv.schemas import load_schema

T = TypeVar("T")


def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("may be left out, but not null")
    return value


def _integral_float_as_int(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An optional key of the schemas: absent is fine, but `null` is not a value the schema allows.
Omittable = Annotated[T | None, BeforeValidator(_not_null)]
# A schema's integer is a number without a fraction, so 1.0 is one (and is read as 1); anything
# else the schema refuses (1.5, "1", true) strict mode refuses too, rather than coercing it.
SchemaInt = Annotated[StrictInt, BeforeValidator(_integral_float_as_int)]
NonEmptyStr = Annotated[StrictStr, StringConstraints(min_length=1)]
Role = Literal["system", "user", "assistant", "tool"]
ProviderOptions = dict[str, dict[str, Any]]
TIMESTAMP_PATTERN: str = load_schema("conversation-step")["properties"]["timestamp"]["pattern"]


@cache
def _field_names(model: type[BaseModel]) -> dict[str, str]:
    names = {name: name for name in model.model_fields}
    return names | {f.alias: name for name, f in model.model_fields.items() if f.alias}


class _Record(BaseModel):
    """A record whose dump lists its keys in the order they were read (SPEC §6)."""

    model_config = ConfigDict(strict=True, populate_by_name=True, serialize_by_alias=True)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_key_order(cls, data: Any, handler: Any) -> Any:
        record = handler(data)
        if isinstance(data, dict):
            # pydantic fills __dict__ in declaration order and dumps fields in __dict__ order
            # (unknown keys come after them); model_construct sets __dict__ the same way.
            names, values = _field_names(cls), record.__dict__
            ordered = {names[key]: values[names[key]] for key in data if key in names}
            object.__setattr__(record, "__dict__", ordered | values)
        return record


class EvalRecord(_Record):
    """A record of an eval file or of a prompt: an unknown key is an error."""

    model_config = ConfigDict(extra="forbid")


class RecordedRecord(_Record):
    """A part of a recorded conversation: an unknown key is kept, never dropped."""

    model_config = ConfigDict(extra="allow")


# Eval files ---------------------------------------------------------------------------------


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

    role: Role
    content: StrictStr | list[Segment]


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
    expected_messages: Omittable[list[InputMessage]] = None
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


# Chat prompts and provider requests ---------------------------------------------------------


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


# Recorded conversations (AI SDK 5 model messages) -------------------------------------------


class TextPart(RecordedRecord):
    type: Literal["text"]
    text: StrictStr
    providerOptions: Omittable[ProviderOptions] = None


class ImagePart(RecordedRecord):
    type: Literal["image"]
    image: StrictStr
    mediaType: Omittable[StrictStr] = None
    providerOptions: Omittable[ProviderOptions] = None


class FilePart(RecordedRecord):
    type: Literal["file"]
    data: StrictStr
    mediaType: StrictStr
    filename: Omittable[StrictStr] = None
    providerOptions: Omittable[ProviderOptions] = None


class ReasoningPart(RecordedRecord):
    type: Literal["reasoning"]
    text: StrictStr
    providerOptions: Omittable[ProviderOptions] = None


class ToolCallPart(RecordedRecord):
    type: Literal["tool-call"]
    toolCallId: NonEmptyStr
    toolName: NonEmptyStr
    input: Any
    providerExecuted: Omittable[StrictBool] = None
    providerOptions: Omittable[ProviderOptions] = None


class TextOutput(RecordedRecord):
    type: Literal["text", "error-text"]
    value: StrictStr
    providerOptions: Omittable[ProviderOptions] = None


class JsonOutput(RecordedRecord):
    type: Literal["json", "error-json"]
    value: Any
    providerOptions: Omittable[ProviderOptions] = None


class TextItem(RecordedRecord):
    type: Literal["text"]
    text: StrictStr


class MediaItem(RecordedRecord):
    type: Literal["media"]
    data: StrictStr
    mediaType: StrictStr


class ContentOutput(RecordedRecord):
    type: Literal["content"]
    value: list[Annotated[TextItem | MediaItem, Field(discriminator="type")]]
    providerOptions: Omittable[ProviderOptions] = None


ToolResultOutput = Annotated[TextOutput | JsonOutput | ContentOutput, Field(discriminator="type")]


class ToolResultPart(RecordedRecord):
    type: Literal["tool-result"]
    toolCallId: NonEmptyStr
    toolName: NonEmptyStr
    output: ToolResultOutput
    providerOptions: Omittable[ProviderOptions] = None


UserPart = Annotated[TextPart | ImagePart | FilePart, Field(discriminator="type")]
AssistantPart = Annotated[
    TextPart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart,
    Field(discriminator="type"),
]


class SystemMessage(RecordedRecord):
    role: Literal["system"]
    content: StrictStr
    providerOptions: Omittable[ProviderOptions] = None


class UserMessage(RecordedRecord):
    role: Literal["user"]
    content: StrictStr | list[UserPart]
    providerOptions: Omittable[ProviderOptions] = None


class AssistantMessage(RecordedRecord):
    role: Literal["assistant"]
    content: StrictStr | list[AssistantPart]
    providerOptions: Omittable[ProviderOptions] = None


class ToolMessage(RecordedRecord):
    role: Literal["tool"]
    content: list[ToolResultPart]
    providerOptions: Omittable[ProviderOptions] = None


AnyModelMessage = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]


class ModelMessage(RootModel[AnyModelMessage]):
    """An AI SDK 5 model message, whatever its role."""


class ConversationStep(RecordedRecord):
    """One turn of a recorded conversation."""

    stepIndex: Annotated[SchemaInt, Field(ge=0)]
    input: AnyModelMessage
    output: list[AnyModelMessage]
    id: Omittable[StrictStr] = None
    timestamp: Omittable[Annotated[StrictStr, StringConstraints(pattern=TIMESTAMP_PATTERN)]] = None
    metadata: Omittable[dict[str, Any]] = None


class StepRecord(ConversationStep):
    """A step stored one per JSONL line, which may name its conversation."""

    conversationId: StrictStr | None = None


class Conversation(RecordedRecord):
    """A whole recorded conversation on one JSONL line."""

    id: NonEmptyStr
    steps: list[ConversationStep]
    metadata: Omittable[dict[str, Any]] = None


MODELS: dict[str, type[BaseModel]] = {
    "chat-message": ChatMessage,
    "chat-prompt": ChatPrompt,
    "config": Config,
    "conversation": Conversation,
    "conversation-step": ConversationStep,
    "eval-case": EvalCase,
    "eval-file": EvalFile,
    "evaluator": Evaluator,
    "input-message": InputMessage,
    "model-message": ModelMessage,
    "provider-request": ProviderRequest,
    "step-record": StepRecord,
}


def parse_record(kind: str, data: Any) -> BaseModel:
    """`data` as the model of `kind` (a schema name); pydantic.ValidationError when invalid."""
    try:
        model = MODELS[kind]
    except KeyError:
        raise KeyError(f"no model for {kind!r}; known: {', '.join(MODELS)}") from None
    return model.model_validate(data)
