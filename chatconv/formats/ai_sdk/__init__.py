"""AI SDK steps, chatconv's own recordings: a step per line, or a conversation (its steps) per line.

Each step holds its input message and its output messages, in order; a legacy one-message
output is read as [message].
"""

from __future__ import annotations

from typing import Any

from ...kinds import detect_kind
from ...messages import conversation_messages, iter_steps

NAME = "ai-sdk"


def detect(data: Any) -> bool:
    """A step record or a conversation record."""
    return detect_kind(data) in ("step-record", "conversation")


def to_model_messages(data: Any) -> list[dict]:
    """The messages of a step, or of a conversation's steps, in order."""
    return conversation_messages([step for _, step in iter_steps(data)])

