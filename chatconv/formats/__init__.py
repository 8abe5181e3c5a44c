"""Recording formats: each way chatconv reads a recorded conversation, behind one small protocol.

A format says how its data is recognised and how it becomes AI SDK model messages, the shape
every later stage (providers, replay) reads. Today chatconv reads two: AI SDK steps (its own
recordings) and the OpenAI chat messages that `from_openai_messages` reads. A new format is a
new module listed in FORMATS.
"""

from __future__ import annotations

from typing import Any, Protocol

from . import ai_sdk, openai_chat
from .ai_sdk import conversation_messages
from .openai_chat import from_openai_messages


class RecordingFormat(Protocol):
    NAME: str  # e.g. "ai-sdk"

    def detect(self, data: Any) -> bool:
        """Whether parsed data (a record, or a list of messages) is written in this format."""

    def to_model_messages(self, data: Any) -> list[dict]:
        """The conversation's AI SDK model messages, in order."""


FORMATS: tuple[RecordingFormat, ...] = (ai_sdk, openai_chat)

__all__ = ["FORMATS", "RecordingFormat", "conversation_messages", "from_openai_messages"]
