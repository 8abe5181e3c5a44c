"""The Vercel AI SDK 5's own `modelMessageSchema` as the suite's oracle (tests/oracles/ai-sdk-5.mjs,
README there): is what chatconv writes a message the AI SDK reads, and does it keep every key?
Also the AI SDK 4 shapes that migration 0002 upgrades, as hypothesis strategies."""

from __future__ import annotations

import copy
import json
import subprocess
from typing import Any, Iterable

from hypothesis import strategies as st

from agentv import NODE, ORACLES, needs_node

__all__ = ["IMAGE_DATA", "ai_sdk4_parts", "ai_sdk4_records", "ai_sdk5", "needs_node", "refused_or_stripped"]

AI_SDK5 = ORACLES / "ai-sdk-5.mjs"


def ai_sdk5(records: Iterable[Any], *, as_prompt: bool = False) -> list[dict]:
    """The AI SDK 5's verdict on each of `records` (step records, conversations, messages or
    message lists; JSON values, not text), all in one node process: one dict per record, in
    order, with `ok`, `issues` (zod's, with the SDK's messages), `stripped` (keys the SDK
    accepts but drops: data lost) and `notes`. `as_prompt` also runs each step through
    `generateText` (a mock model)."""
    lines = "".join(json.dumps(record) + "\n" for record in records)
    if not lines:
        return []
    run = subprocess.run([NODE, str(AI_SDK5), *(["--as-prompt"] if as_prompt else [])],
                         input=lines, capture_output=True, text=True)
    assert run.returncode == 0, f"the AI SDK 5 oracle failed ({run.returncode}): {run.stderr}"
    verdicts = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(verdicts) == lines.count("\n"), f"one verdict per record, not {len(verdicts)}: {run.stderr}"
    return verdicts


def refused_or_stripped(records: list[Any], verdicts: list[dict], *, stripped: bool = True) -> list[dict]:
    """Each record the SDK refused (or, with `stripped`, lost a key of), with why: [] when all passed."""
    return [{"record": record, "issues": verdict["issues"], "stripped": verdict["stripped"]}
            for record, verdict in zip(records, verdicts, strict=True)
            if not verdict["ok"] or (stripped and verdict["stripped"])]


# AI SDK 4 shapes, generated: what migration 0002 upgrades --------------------------------------

_TEXT = st.text(max_size=8)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=5)
_UNKNOWN = st.dictionaries(st.from_regex(r"\Ax_[a-z]{1,6}\Z"), _JSON, max_size=2)  # never a key 0002 owns
# Base64 of a PNG, JPEG, GIF and WebP head, of no known image, and text that is no base64 at all.
IMAGE_DATA = ["iVBORw0KGgoAAAANSUhEUg==", "/9j/4AAQSkZJRgABAQ==", "R0lGODlhAQABAIAAAA==",
              "UklGRiQAAABXRUJQVlA4IA==", "AAAA", "not base64!"]


def _options(conflicts: bool) -> st.SearchStrategy:
    """providerOptions; with `conflicts`, at times already holding what 0002 would write there."""
    keys = st.sampled_from(["cacheControl", "x"] + (["signature", "redactedData"] if conflicts else [])) | _TEXT
    anthropic = st.dictionaries(keys, _JSON, max_size=2)
    values = (anthropic | _JSON) if conflicts else anthropic  # an anthropic that is no object stays
    return st.fixed_dictionaries({}, optional={"anthropic": values, "openai": st.dictionaries(_TEXT, _JSON, max_size=2)})


@st.composite
def _content_items(draw, conflicts: bool) -> list:
    """AI SDK 4 tool-result content: text items and image items (mimeType optional)."""
    items = []
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            item = {"type": "text", "text": draw(_TEXT)}
        else:
            item = {"type": "image", "data": draw(st.sampled_from(IMAGE_DATA))}
            if draw(st.booleans()):
                item["mimeType"] = draw(st.sampled_from(["image/png", "image/jpeg", "image/webp"]))
        if conflicts and draw(st.integers(0, 5)) == 0:
            item["x_extra"] = 1  # an item AI SDK 5 would not keep whole: it stays
        items.append(item)
    return items


@st.composite
def _tool_result(draw, conflicts: bool) -> dict:
    part = {"type": "tool-result", "toolCallId": draw(_TEXT.filter(bool)), "toolName": draw(_TEXT.filter(bool))}
    content = draw(_content_items(conflicts))
    failed = draw(st.sampled_from([None, True, False]))
    shape = draw(st.sampled_from(["result", "old-0002", "alone", "plain", "undefined"]))
    if shape == "plain":  # no content: a result, as most are
        part["result"] = draw(_JSON)
    elif shape == "undefined":  # a tool that returned undefined: JSON wrote no result
        pass
    elif shape == "result":  # as AI SDK 4 wrote it: the same value twice
        part["result"] = draw(_JSON) if conflicts and draw(st.integers(0, 4)) == 0 else copy.deepcopy(content)
    elif shape == "old-0002":  # as the earlier migration 0002 left it: the result as an output, the copy kept
        part["output"] = {"type": "error-json" if failed else "json", "value": copy.deepcopy(content)}
        failed = None
    elif failed and not conflicts:
        failed = None  # a failed call with content and no result has no AI SDK 5 shape: it stays
    if failed is not None:
        part["isError"] = failed
    if shape not in ("plain", "undefined"):
        part["experimental_content"] = content
    return part


@st.composite
def ai_sdk4_parts(draw, role: str, conflicts: bool = True) -> dict:
    """A part of an AI SDK 4 message of `role`. Without `conflicts`, only shapes 0002 moves
    whole: no unknown keys, nothing already where 0002 would write."""
    kinds = {"user": ["text", "image", "file"],
             "assistant": ["text", "file", "reasoning", "redacted-reasoning", "tool-call"],
             "tool": ["tool-result"]}[role]
    kind = draw(st.sampled_from(kinds))
    if kind == "text":
        part = {"type": "text", "text": draw(_TEXT)}
    elif kind == "image":
        part = {"type": "image", "image": draw(st.sampled_from(IMAGE_DATA + ["https://example.com/a.png"]))}
        if draw(st.booleans()):
            part["mimeType"] = "image/png"
    elif kind == "file":
        part = {"type": "file", "data": draw(st.sampled_from(IMAGE_DATA + ["data:application/pdf;base64,JVBERi0="])),
                "mimeType": draw(st.sampled_from(["application/pdf", "image/png", "text/plain"]))}
    elif kind == "reasoning":
        part = {"type": "reasoning", "text": draw(_TEXT)}
        if draw(st.booleans()):
            part["signature"] = draw(_TEXT)
    elif kind == "redacted-reasoning":
        part = {"type": "redacted-reasoning", "data": draw(_TEXT)}
    elif kind == "tool-call":
        part = {"type": "tool-call", "toolCallId": draw(_TEXT.filter(bool)), "toolName": draw(_TEXT.filter(bool)),
                "args": draw(_JSON)}
    else:
        part = draw(_tool_result(conflicts))
    metadata = draw(st.sampled_from([None, "providerOptions", "experimental_providerMetadata"]))
    if metadata is not None:
        part[metadata] = draw(_options(conflicts))
    if conflicts:  # unknown keys, slipped in anywhere
        items = list(part.items())
        for key, value in draw(_UNKNOWN).items():
            items.insert(draw(st.integers(0, len(items))), (key, value))
        part = dict(items)
    return part


@st.composite
def ai_sdk4_records(draw, conflicts: bool = True) -> dict:
    """A step record in AI SDK 4 shapes (output an array: 0001 is not what this is about)."""
    def message(role: str) -> dict:
        return {"role": role, "content": draw(st.lists(ai_sdk4_parts(role, conflicts), min_size=1, max_size=4))}
    return {"stepIndex": 0, "input": message("user"),
            "output": [message("assistant"), message("tool"), *([message("assistant")] if draw(st.booleans()) else [])]}
