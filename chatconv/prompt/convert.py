"""Eval case -> segments -> ChatPrompt, question and guidelines (SPEC §2; seeds 000-002).

`convert_to_chat_prompt` takes seed 000's inputs (messages, their segments, patterns, system
prompt, guideline content) and always returns a ChatPrompt. `build_prompt_inputs` resolves a
case's files and returns the question, the guideline block and the ChatPrompt, which is None
for a single user-only input.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..cases import Case, Source, segment_path
from ..problems import ChatconvError
from ..references import FileReferenceError, is_guideline, read_reference

from .context import EvalFileContext

DEFAULT_SYSTEM_PROMPT = "You are a careful assistant."
SYSTEM_POLICIES = ("merge", "assistant", "user", "keep")
GUIDELINES_HEADER = "[[ ## Guidelines ## ]]"
_ROLE_MARKERS = {"system": "[System]", "user": "[User]", "assistant": "[Assistant]", "tool": "[Tool]"}


@dataclass(frozen=True)
class Segment:
    """A piece of a message: inline text, or a file with its text read."""

    type: Literal["text", "file"]
    value: str  # the text, or the file's path as written
    text: str = ""  # a file's text
    guideline: bool = False
    file: Path | None = None  # the resolved file: one guideline file counts once, however named

    @property
    def counts(self) -> bool:
        """Whether the segment is content (guideline references alone are not)."""
        if self.type == "text":
            return bool(self.value.strip())
        return not self.guideline and bool(self.text)


@dataclass
class PromptInputs:
    question: str
    guidelines: str
    chat_prompt: list[dict] | None

    def as_request(self, system_prompt: str | None = None) -> dict:
        """The provider request a run records and hands a provider (SPEC §1)."""
        request: dict[str, Any] = {"question": self.question, "guidelines": self.guidelines}
        if self.chat_prompt is not None:
            request["chatPrompt"] = self.chat_prompt
        if system_prompt is not None:
            request["systemPrompt"] = system_prompt
        return request


@dataclass
class PromptOptions:
    """What the caller brings from outside the eval file (the CLI, a suite)."""

    guideline_patterns: list[str] | None = None  # None: the eval file's, else the config's
    system_prompt: str | None = None  # used when neither the input nor metadata has one
    guideline_content: str | None = None  # joins the guideline files' block
    system_policy: str = "merge"
    default_system_prompt: str = DEFAULT_SYSTEM_PROMPT
    allow_outside_root: bool = False


# ---------------------------------------------------------------------------------------------
# Segments


def _string_segments(content: Any) -> list[dict]:
    return [{"type": "text", "value": content}] if isinstance(content, str) else content


def _segment_file(segment: Segment, patterns: list[str] | None) -> bool:
    return segment.type == "file" and (segment.guideline or (
        bool(patterns) and is_guideline(segment.value, None, Path("/"), list(patterns))))


def _classified(segments: list[Segment], patterns) -> list[Segment]:
    return [Segment(s.type, s.value, s.text, True, s.file) if not s.guideline and _segment_file(s, patterns) else s
            for s in segments]


def _has_content(segments: list[Segment]) -> bool:
    return any(s.counts for s in segments)


def _render(segments: list[Segment], role: str) -> str:
    """A message's parts joined with newlines: files embedded, guideline files as markers."""
    parts = []
    for segment in segments:
        if segment.type == "text":
            if segment.counts:
                parts.append(segment.value)
        elif segment.guideline:
            if role != "system":
                parts.append(f"<Attached: {segment.value}>")
        elif segment.text:
            # A system prompt may live in a file: its text goes in as it is.
            parts.append(segment.text if role == "system" else f"=== {segment.value} ===\n{segment.text}")
    return "\n".join(parts)


def guideline_block(segments_by_message: list[list[Segment]], guideline_content: str | None = None) -> str:
    """Each guideline file once, in order of first appearance, then any outside content."""
    files: dict[Any, Segment] = {}
    for segments in segments_by_message:
        for segment in segments:
            if segment.type == "file" and segment.guideline and segment.text:
                files.setdefault(segment.file or segment.value, segment)
    if len(files) == 1:
        block = next(iter(files.values())).text
    else:
        block = "\n\n".join(f"=== {s.value} ===\n{s.text}" for s in files.values())
    return "\n\n".join(part for part in (block, guideline_content) if part)


# ---------------------------------------------------------------------------------------------
# Conversion


def convert_to_chat_prompt(
    messages: list[dict],
    segments_by_message: list[list[Segment]],
    guideline_patterns: list[str] | None = None,
    system_prompt: str | None = None,
    guideline_content: str | None = None,
    *,
    system_policy: str = "merge",
    default_system_prompt: str = DEFAULT_SYSTEM_PROMPT,
) -> list[dict]:
    """The ChatPrompt of messages whose segments are resolved (one list per message)."""
    if system_policy not in SYSTEM_POLICIES:
        raise ValueError(f"system policy must be one of {SYSTEM_POLICIES}, not {system_policy!r}")
    segments_by_message = [_classified(s, guideline_patterns) for s in segments_by_message]
    block = guideline_block(segments_by_message, guideline_content)
    conversation_started = False
    base: list[str] = []
    body: list[dict] = []
    for message, segments in zip(messages, segments_by_message):
        role = message["role"]
        text = _render(segments, role)
        if role != "system":
            if _has_content(segments):
                conversation_started = True
                body.append({"role": role, "content": text})
        elif not text:
            continue
        elif not conversation_started or system_policy == "merge":
            base.append(text)
        elif system_policy == "keep":
            body.append({"role": "system", "content": text})
        else:
            body.append({"role": system_policy, "content": f"[System]: {text}"})
    system = "\n\n".join(base) or system_prompt or (default_system_prompt if block else None)
    if block:
        system = f"{system}\n\n{GUIDELINES_HEADER}\n\n{block}" if system else f"{GUIDELINES_HEADER}\n\n{block}"
    return ([{"role": "system", "content": system}] if system else []) + body


def build_question(messages: list[dict], segments_by_message: list[list[Segment]]) -> str:
    """The transcript for logging and agent providers: `[Role]: text` per message with content."""
    with_content = [(m, s) for m, s in zip(messages, segments_by_message) if _has_content(s)]
    if len(with_content) == 1 and with_content[0][0]["role"] == "user":
        return _render(with_content[0][1], "user")
    # Every role shows guideline files as markers here: the question is a transcript.
    return "\n".join(f"{_ROLE_MARKERS[m['role']]}: {_render(s, 'user')}" for m, s in with_content)


def is_single_user_turn(messages: list[dict], segments_by_message: list[list[Segment]]) -> bool:
    roles = [m["role"] for m, s in zip(messages, segments_by_message) if _has_content(s)]
    return roles == ["user"]


# ---------------------------------------------------------------------------------------------
# From an eval file's case


def resolve_segments(content: Any, context: EvalFileContext, where: tuple, options: PromptOptions,
                     source: Source | None = None) -> list[Segment]:
    """A message's content as Segments, with each file found, read and classified; a reference
    that fails is a problem at `where` in `source` (the eval file when not given)."""
    segments = []
    for index, raw in enumerate(_string_segments(content)):
        if raw["type"] == "text":
            segments.append(Segment("text", raw["value"]))
            continue
        place = segment_path(where, index) if isinstance(content, list) else where
        try:
            # Looked up, checked against the root and read from one open file (see read_reference).
            file, text = read_reference(raw["value"], context.path.parent, context.root, options.allow_outside_root)
        except FileReferenceError as exc:
            problem = (source or context.source).problem(place, exc.message, exc.hint, "file-reference")
            raise ChatconvError(problem) from None
        guideline = is_guideline(raw["value"], file, context.root, context.patterns)
        segments.append(Segment("file", raw["value"], text, guideline, file))
    return segments


def build_prompt_inputs(case: Case | dict, context: EvalFileContext, options: PromptOptions | None = None,
                        case_path: tuple = ()) -> PromptInputs:
    """The question, guideline block and ChatPrompt (None for a single user-only input) of a case:
    a Case of any era, or a case of the internal shape (`input_messages`) at `case_path`."""
    options = options or PromptOptions()
    if isinstance(case, Case):
        messages, places, source = case.messages, case.content_paths, case.source
    else:
        messages, source = case["input_messages"], None
        places = [case_path + ("input_messages", i, "content") for i in range(len(messages))]
    segments = [resolve_segments(m["content"], context, place, options, source)
                for m, place in zip(messages, places)]
    system_prompt = context.case_system_prompt(case, options)
    chat_prompt = None
    if not is_single_user_turn(messages, segments):
        chat_prompt = convert_to_chat_prompt(
            messages, segments, None, system_prompt, options.guideline_content,
            system_policy=options.system_policy, default_system_prompt=options.default_system_prompt)
    guidelines = guideline_block(segments, options.guideline_content)
    return PromptInputs(build_question(messages, segments), guidelines, chat_prompt)
