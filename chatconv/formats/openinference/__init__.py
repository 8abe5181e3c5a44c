"""OpenInference spans (Phoenix, Arize, any-agent, the openinference-instrumentation packages):
model calls whose messages are flattened attributes, `llm.input_messages.N.message.role`,
`.content`, `.contents.K.message_content.*`, `.tool_calls.M.tool_call.function.*`,
`llm.output_messages.N.message.*`, beside `openinference.span.kind`, `llm.model_name`,
`llm.invocation_parameters` and the token counts.

Read (import only) as otel-genai reads spans, the flattened messages put in the GenAI
conventions' form first (otel_genai/flattened.py): a span as the OpenTelemetry SDK writes it
(one, an array, or `{"spans": [...]}`), or a span's attributes alone. Each LLM span is a
conversation (its input messages, then its output messages); its other attributes, its own
fields (name, context, times, status, resource) and the export's other keys are the
conversation's metadata. Spans of no messages (CHAIN, TOOL, AGENT) are not imported, said.
An OTLP JSON trace of such spans is read by otel-genai, the same way.
"""

from __future__ import annotations

from typing import Any

from ..otel_genai import read
from ..otel_genai.flattened import is_openinference

NAME = "openinference"
KEYS = frozenset({"spans", "attributes", "openinference.span.kind", "llm.input_messages.0.message.role",
                  "llm.output_messages.0.message.role"})

__all__ = ["NAME", "detect", "read"]


def detect(data: Any) -> bool:
    """A span (or `{"spans": [...]}` of them) whose attributes are OpenInference's, or such attributes alone."""
    if not isinstance(data, dict):
        return False
    if isinstance(data.get("spans"), list):
        return any(_is_span(span) for span in data["spans"])
    return _is_span(data) or is_openinference(data)


def _is_span(span: Any) -> bool:
    return isinstance(span, dict) and isinstance(span.get("attributes"), dict) and is_openinference(span["attributes"])
