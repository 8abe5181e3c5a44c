"""The formats chatconv reads and writes, in the order detection tries them (most particular
first: a plain `{"messages": [...]}` body is OpenAI's unless another format's marks are there)."""

from __future__ import annotations

from typing import Any, Iterator, Protocol

# The modules themselves, by their full names: `from . import` would be the package, whose
# __init__ imports this registry.
import chatconv.formats.agentv_run as agentv_run
import chatconv.formats.ai_sdk as ai_sdk
import chatconv.formats.ai_sdk_ui as ai_sdk_ui
import chatconv.formats.alpaca as alpaca
import chatconv.formats.anthropic as anthropic
import chatconv.formats.bedrock_converse as bedrock_converse
import chatconv.formats.claude_agent_sdk as claude_agent_sdk
import chatconv.formats.claude_code as claude_code
import chatconv.formats.codex_cli as codex_cli
import chatconv.formats.gemini as gemini
import chatconv.formats.gemini_cli as gemini_cli
import chatconv.formats.hf_messages as hf_messages
import chatconv.formats.inspect_log as inspect_log
import chatconv.formats.openai_chat as openai_chat
import chatconv.formats.openai_responses as openai_responses
import chatconv.formats.openinference as openinference
import chatconv.formats.otel_genai as otel_genai
import chatconv.formats.preference as preference
import chatconv.formats.pydantic_ai as pydantic_ai
import chatconv.formats.sharegpt as sharegpt
import chatconv.formats.streams as streams

from ..problems import UsageError
from .reading import Imported, Reading


class RecordingFormat(Protocol):
    NAME: str  # e.g. "openai-chat"
    # An object of this format has at least one of these keys: detection asks only the formats
    # an object has a key of (most records are of one format, whose walk of the messages is the cost).
    KEYS: frozenset[str]

    def detect(self, data: Any) -> bool:
        """Whether a parsed record (an object, or a list of messages) is written in this format."""

    def read(self, reading: Reading) -> Iterator[Imported]:
        """The record's conversations as model messages; problems through reading.warn / error."""


IMPORTED: tuple[RecordingFormat, ...] = (
    inspect_log, agentv_run, ai_sdk_ui, openinference, otel_genai, openai_responses, claude_code, claude_agent_sdk,
    codex_cli, gemini_cli, pydantic_ai, gemini, bedrock_converse, anthropic, preference, sharegpt, alpaca, hf_messages,
    openai_chat)
FORMATS: tuple[Any, ...] = (ai_sdk, *IMPORTED)  # ai-sdk: chatconv's own recordings, never imported
IMPORTED_NAMES = tuple(fmt.NAME for fmt in IMPORTED)
EXPORTED = tuple(fmt.NAME for fmt in IMPORTED if hasattr(fmt, "write"))
# Files that are not JSON or YAML but a format reads (inspect's .eval zip): folders are searched for them too.
OWN_SUFFIXES = frozenset(suffix for fmt in (*IMPORTED, streams) for suffix in getattr(fmt, "SUFFIXES", ()))


def format_named(name: str) -> RecordingFormat:
    for fmt in IMPORTED:
        if fmt.NAME == name:
            return fmt
    raise UsageError(f"unknown format {name!r}; chatconv reads {', '.join(IMPORTED_NAMES)}")
