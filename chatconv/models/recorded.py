"""Models of recorded conversations: AI SDK 5 model messages and their parts, steps, and whole
conversations. Unknown keys are kept (a recording is never made poorer by reading it).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, RootModel, StrictBool, StrictStr, StringConstraints

from ..schemas import load_schema
from .base import NonEmptyStr, Omittable, ProviderOptions, RecordedRecord, SchemaInt

TIMESTAMP_PATTERN: str = load_schema("conversation-step")["properties"]["timestamp"]["pattern"]


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
    """A typed tool output. Outputs carry no providerOptions: AI SDK 5 drops them."""

    type: Literal["text", "error-text"]
    value: StrictStr


class JsonOutput(RecordedRecord):
    type: Literal["json", "error-json"]
    value: Any


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
