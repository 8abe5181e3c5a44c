"""A case's prompt as AgentV's own prompt builder makes it (its `buildPromptInputs`), release by
release, and the messages its LLM providers then send: what `chatconv prompt` writes unless
asked for the seed form (convert.py).

Read from AgentV's code at 0.20.0, 2.5.8, v3.8.0, v4.42.4 and 58f316ca2 and checked against it
case by case in the test suite (tests/test_agentv_prompts.py):

- One message with content (and no assistant or tool message): the question is each segment
  rendered and trimmed, the non-empty ones joined by a blank line, with no role marker and no
  chatPrompt. Else the question is `@[Role]:` and each message's segments (joined by newlines,
  untrimmed), the messages joined by blank lines; the chatPrompt is the leading system messages
  merged into one, then the rest, a later system or tool message as an assistant's that starts
  `@[System]:` or `@[Tool]:`.
- A file is `<file path="P">` (P as written, less a leading `/`) around its text trimmed; for
  agent providers `<file: path="P">` only (from v4, P the file's absolute path).
- Up to v3.8.0: files that the config's `guideline_patterns` name are guidelines: gathered in
  `guidelines` (`<file path="NAME">` blocks), put first in the system message under
  `[[ ## Guidelines ## ]]`, and shown as `<Attached: P>` where a message of several named them.
  A file written with a leading `/` is lost in a prompt of several messages (AgentV looks it up
  by the name it stripped): it is, here too. 0.20.0 repeats the code blocks of a one-message
  prompt at its end, and reads only a config that declares `$schema: agentv-config-v2`.
- From v4: no guidelines; `systemMessage` is the leading system messages, merged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cases import Case, segment_path
from ..cases.shorthand import as_json_text
from ..eras.releases import GUIDELINES_REMOVED, SNIPPETS_REPEATED_BEFORE, Release
from ..problems import ChatconvError
from ..references import FileReferenceError, open_reference, segment_text
from .context import EvalFileContext
from .convert import GUIDELINES_HEADER

# What AgentV's LLM providers put before a prompt that has no system message of its own.
AGENTV_SYSTEM_PROMPT = "You are a careful assistant. Follow all provided instructions and do not fabricate results."
_CODE_BLOCK = re.compile(r"```[\s\S]*?```")


@dataclass(frozen=True)
class _Piece:
    """A segment of a message as AgentV reads it: text, or a file with its text."""

    text: str  # the text, or the file's text (CRLF as LF)
    file: str | None = None  # a file's value as written
    found: Path | None = None  # the file's path
    guideline: bool = False

    def rendered(self, agent: bool, absolute: bool) -> str:
        if self.file is None:
            return self.text
        shown = str(self.found) if agent and absolute else self.file.lstrip("/\\")
        return f'<file: path="{shown}">' if agent else f'<file path="{shown}">\n{self.text.strip()}\n</file>'


@dataclass
class AgentVInputs:
    """What AgentV's buildPromptInputs gives for a case (as its `prompt` command writes it), and
    the release that built it."""

    release: Release
    question: str
    chat_prompt: list[dict] | None = None
    guidelines: str | None = None  # up to v3.8.0: always there ("" without guideline files)
    system_message: str | None = None  # from v4: the leading system messages, when they have content

    def as_json(self) -> dict:
        """AgentV's own fields, in its order."""
        out: dict[str, Any] = {"question": self.question}
        if self.guidelines is not None:
            out["guidelines"] = self.guidelines
        if self.chat_prompt is not None:
            out["chatPrompt"] = self.chat_prompt
        if self.system_message is not None:
            out["systemMessage"] = self.system_message
        return out

    def messages(self) -> list[dict]:
        """The messages AgentV's LLM providers send for it: the chatPrompt (its own system
        message first, else AgentV's default before it); without one, a system message and the
        question as the user's."""
        if self.chat_prompt is not None:
            if any(m["role"] == "system" for m in self.chat_prompt):
                return list(self.chat_prompt)
            return [{"role": "system", "content": AGENTV_SYSTEM_PROMPT}, *self.chat_prompt]
        system = (self.system_message or "").strip() or AGENTV_SYSTEM_PROMPT
        if self.guidelines and self.guidelines.strip():
            system = f"{system}\n\n{GUIDELINES_HEADER}\n\n{self.guidelines.strip()}"
        return [{"role": "system", "content": system}, {"role": "user", "content": self.question.strip()}]


def agentv_prompt_inputs(case: Case, context: EvalFileContext, release: Release, patterns: list[str],
                         agent: bool = False, allow_outside_root: bool = False) -> AgentVInputs:
    """The prompt AgentV `release` builds for `case` (for an agent provider with `agent`);
    `patterns`: the guideline patterns in force (read up to v3.8.0 only). ChatconvError when a
    file of the input cannot be read (validate has said so first)."""
    old = release.before(GUIDELINES_REMOVED)
    messages = [(m["role"], _pieces(m, case, context, index, patterns if old else [], release, allow_outside_root,
                                    suite_files=old and release.era == "tests" and _from_suite(case, index)))
                for index, m in enumerate(case.messages)]
    messages = [(role, pieces) for role, pieces in messages if pieces is not None]  # 0.20.0 drops some
    absolute = not old

    def counts(piece: _Piece, several: bool) -> bool:
        if piece.guideline:
            return False
        if piece.file is not None:
            return bool(piece.text.strip()) and not (old and several and piece.file[:1] in "/\\")
        return bool(piece.text.strip())

    with_content = [pieces for _, pieces in messages if any(counts(p, True) for p in pieces)]
    several = any(role in ("assistant", "tool") for role, _ in messages) or len(with_content) > 1
    guidelines = _guidelines(messages) if old else None
    system_message = None
    if not old:
        leading = [_joined(pieces, agent, absolute, several=False) for _, pieces in _leading_system(messages)]
        system_message = "\n\n".join(text for text in leading if text) or None
    if not several:
        flat = [p for _, pieces in messages for p in pieces if not p.guideline]
        parts = [text for text in (p.rendered(agent, absolute).strip() for p in flat) if text]
        if release.before(SNIPPETS_REPEATED_BEFORE):
            blocks = [block for p in flat if p.file is None for block in _CODE_BLOCK.findall(p.text)]
            if blocks:
                parts.append("\n".join(blocks))
        return AgentVInputs(release, "\n\n".join(parts), None, guidelines, system_message)

    def shown(pieces: list[_Piece], marked: bool) -> str:
        return _joined(pieces, agent, absolute, several=True, old=old, marked=marked, patterns=patterns)

    question = "\n\n".join(f"@[{role[:1].upper()}{role[1:]}]:\n{shown(pieces, True)}"
                           for role, pieces in messages if any(counts(p, True) for p in pieces))
    system_parts = [f"{GUIDELINES_HEADER}\n\n{guidelines.strip()}"] if guidelines and guidelines.strip() else []
    leading = _leading_system(messages)
    # The leading system messages keep a guideline's `<Attached: P>`, as the question does.
    system_parts += [text for text in (shown(pieces, True) for _, pieces in leading) if text]
    chat = [{"role": "system", "content": "\n\n".join(system_parts)}] if system_parts else []
    for role, pieces in messages[len(leading):]:
        text = shown(pieces, False)
        if not text:
            continue
        if role in ("system", "tool"):
            chat.append({"role": "assistant", "content": f"@[{role[:1].upper()}{role[1:]}]:\n{text}"})
        else:
            chat.append({"role": role, "content": text})
    return AgentVInputs(release, question, chat or None, guidelines, system_message)


def _leading_system(messages: list[tuple[str, list[_Piece]]]) -> list[tuple[str, list[_Piece]]]:
    count = next((i for i, (role, _) in enumerate(messages) if role != "system"), len(messages))
    return messages[:count]


def _joined(pieces: list[_Piece], agent: bool, absolute: bool, *, several: bool, old: bool = False,
            marked: bool = False, patterns: list[str] | None = None) -> str:
    """A message's pieces rendered and joined by newlines: in a prompt of several messages,
    up to v3.8.0, a guideline is `<Attached: P>` in the question (where its name as written
    matches a pattern) and nothing in the chatPrompt, and a file named with a leading `/` is
    lost (see the module's note)."""
    out = []
    for piece in pieces:
        if piece.guideline:
            if marked and piece.file is not None and _matches(piece.file, patterns or []):
                out.append(f"<Attached: {piece.file}>")
            continue
        if several and old and piece.file is not None and piece.file[:1] in "/\\":
            continue
        if piece.file is None and not piece.text.strip():
            continue
        out.append(piece.rendered(agent, absolute))
    return "\n".join(out)


def _guidelines(messages: list[tuple[str, list[_Piece]]]) -> str:
    """The guideline files' blocks, each file once, in order."""
    seen: dict[Path | str, _Piece] = {}
    for _, pieces in messages:
        for piece in pieces:
            if piece.guideline:
                seen.setdefault(piece.found or piece.file, piece)
    return "\n\n".join(f'<file path="{Path(p.file).name}">\n{p.text.strip()}\n</file>' for p in seen.values())


def _from_suite(case: Case, index: int) -> bool:
    """Whether input message `index` of a tests-era case is the suite's `input` (written at
    `$.input`; the suite's `input_files` join a test's own input, and are no guidelines)."""
    where = case.content_paths[index] if index < len(case.content_paths) else ()
    return isinstance(where, tuple) and bool(where) and where[0] == "input"


def _pieces(message: dict, case: Case, context: EvalFileContext, index: int, patterns: list[str],
            release: Release, allow_outside_root: bool, suite_files: bool = False) -> list[_Piece] | None:
    """A message's segments as AgentV reads them; None for a message 0.20.0 drops (content
    neither text nor a list). suite_files: its files are guidelines whatever their names (v3.8.0
    reads those of a suite's input so)."""
    content = message.get("content")
    if isinstance(content, str):
        return [_Piece(content)] if content.strip() else []
    if not isinstance(content, list):
        if release.before(SNIPPETS_REPEATED_BEFORE):
            return None
        if content is None:
            return []
        return [_Piece(as_json_text(content))]
    pieces = []
    for position, segment in enumerate(content):
        if isinstance(segment, str):
            if segment.strip():
                pieces.append(_Piece(segment))
        elif isinstance(segment, dict) and segment.get("type") == "text":
            value = segment.get("value")
            if isinstance(value, str) and value.strip():
                pieces.append(_Piece(value))
        elif isinstance(segment, dict) and segment.get("type") == "file" and isinstance(segment.get("value"), str):
            piece = _file_piece(segment["value"], case, context, index, position, patterns, allow_outside_root)
            pieces.append(_Piece(piece.text, piece.file, piece.found, True) if suite_files else piece)
    return pieces


def open_segment(value: str, case: Case, context: EvalFileContext, index: int, position: int,
                 allow_outside_root: bool) -> tuple[Path, bytes]:
    """The file segment `position` of input message `index` names (its path) and its bytes;
    ChatconvError at the segment's place when it cannot be read (validate has said so first)."""
    try:
        return open_reference(value, context.path.parent, context.root, allow_outside_root)
    except FileReferenceError as exc:
        raise _segment_error(case, index, position, exc) from None


def _segment_error(case: Case, index: int, position: int, exc: FileReferenceError) -> ChatconvError:
    where = case.content_paths[index] if index < len(case.content_paths) else case.path
    return ChatconvError(case.source.problem(segment_path(where, position), exc.message, exc.hint, "file-reference"))


def _file_piece(value: str, case: Case, context: EvalFileContext, index: int, position: int, patterns: list[str],
                allow_outside_root: bool) -> _Piece:
    found, data = open_segment(value, case, context, index, position, allow_outside_root)
    try:
        text = segment_text(data, found)
    except FileReferenceError as exc:  # not UTF-8: validate has said so at the segment too
        raise _segment_error(case, index, position, exc) from None
    relative = found.relative_to(context.root).as_posix() if found.is_relative_to(context.root) else None
    guideline = relative is not None and _matches(relative, patterns)
    return _Piece(text, value, found, guideline)


def _matches(path: str, patterns: list[str]) -> bool:
    """micromatch's isMatch as AgentV calls it: `**` spans folders, dot files match only when
    named, case counts."""
    if not patterns:
        return False
    from wcmatch import glob  # here: only files with guideline patterns need it

    return glob.globmatch(path, patterns, flags=glob.GLOBSTAR | glob.CASE)
