"""The `prompts` of a current-era eval file (AgentV's parsePromptDefinition): each entry as a
template string or a chat (a list of `{role, content}` messages), with its identity id.

Entries: a string (a template; `file://p` is a file's text), a list of messages (one chat
prompt), `{role, content}`, `{messages}`, `{prompt}`, `{raw}`, `{file}`, each with optional `id`
and `label`. A prompt file `.json`/`.yaml`/`.yml` holding a list of messages is a chat prompt;
any other file is a template string. `function` and `command` prompts run code: refused.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Iterator

from ..problems import ChatconvError, Problem
from ..reference_files import FileReferenceError, segment_text
from ..sources import Record, file_format, load_document, problem_at, refuse_foreign_encoding
from . import Lookup, Source
from .shorthand import is_message
from .templates import TemplateProblem, check_syntax

_CODE_KEYS = {"function_file": "function prompts", "function": "function prompts", "command": "command prompts"}


@dataclass
class Prompt:
    id: str  # AgentV's identity id: the `id` written, else the file's path, else a hash
    template: str | list[dict]  # a template string, or a chat (messages whose strings are templates)
    source: Source  # the file it is written in (the eval file or a prompt file)
    path: tuple  # its JSON path there


def content_hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()[:12]


def safe_id(text: str) -> str:
    """A prompt id as AgentV puts it in a case id: runs of other characters as '-', at most 48."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", text.strip()).strip("-")[:48]
    return safe or content_hash(text)


def read_prompts(record: Record, lookup: Lookup) -> Iterator[Prompt | Problem]:
    """The prompts of an eval file in order; a prompt that cannot be used is a Problem."""
    value = record.data.get("prompts") if isinstance(record.data, dict) else None
    if value is None:
        return
    entries = [(value, ("prompts",))]
    if isinstance(value, list) and not (value and all(is_message(item) for item in value)):
        entries = [(item, ("prompts", index)) for index, item in enumerate(value)]
    for entry, where in entries:
        try:
            yield _prompt(record, lookup, entry, where)
        except _Refused as exc:
            yield exc.problem


class _Refused(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


def _prompt(record: Record, lookup: Lookup, entry: Any, where: tuple) -> Prompt:
    source = Source(record.file, record.locate)
    if isinstance(entry, str):
        if entry.strip().startswith("file://"):
            return _file_prompt(record, lookup, entry.strip().removeprefix("file://"), where, None)
        return _checked(Prompt(f"prompt-{content_hash(entry)}", entry, source, where))
    if isinstance(entry, list):
        return _checked(Prompt(f"chat-{content_hash(entry)}", _chat(record, entry, where), source, where))
    if not isinstance(entry, dict):
        raise _Refused(problem_at(record, where, "a prompt is a string, a list of messages or an object",
                                  code="wrong-type"))
    given = entry.get("id") if isinstance(entry.get("id"), str) else None
    for key, name in _CODE_KEYS.items():
        if key in entry:
            raise _Refused(problem_at(record, where + (key,), f"{name} (a prompt made by running code) are "
                                      "not supported", "error", "write the prompt's text or messages, "
                                      "or a file:// prompt file", code="unsupported"))
    if "role" in entry:
        message = {k: v for k, v in entry.items() if k not in ("id", "label")}
        return _checked(Prompt(given or f"chat-{content_hash([message])}", _chat(record, [message], where),
                               source, where))
    if "file" in entry and isinstance(entry["file"], str):
        return _file_prompt(record, lookup, entry["file"].removeprefix("file://"), where + ("file",), given)
    if "messages" in entry:
        chat = _chat(record, entry["messages"], where + ("messages",))
        return _checked(Prompt(given or f"chat-{content_hash(entry['messages'])}", chat, source, where + ("messages",)))
    for key, kind in (("prompt", None), ("raw", "string")):
        if key in entry:
            body = entry[key]
            if isinstance(body, list):
                return _checked(Prompt(given or f"chat-{content_hash(body)}", _chat(record, body, where + (key,)),
                                       source, where + (key,)))
            if isinstance(body, str):
                return _checked(Prompt(given or f"{kind or 'prompt'}-{content_hash(body)}", body, source,
                                       where + (key,)))
    raise _Refused(problem_at(record, where, "a prompt object needs one of: role, messages, prompt, raw, file",
                              code="missing-key"))


def _chat(record: Record, messages: Any, where: tuple) -> list[dict]:
    if not isinstance(messages, list) or not all(is_message(m) for m in messages):
        raise _Refused(problem_at(record, where, "a chat prompt is a list of {role, content} messages",
                                  hint="roles: system, user, assistant, tool", code="wrong-type"))
    return messages


def _checked(prompt: Prompt, text_file: bool = False) -> Prompt:
    """The prompt, once each template string in it is known to parse."""
    for path, text in _strings(prompt.template, ()):
        try:
            check_syntax(text)
        except TemplateProblem as exc:
            at = prompt.source.problem(prompt.path + path, exc.message, exc.hint, exc.code)
            if text_file and exc.line:  # a text file: the template's own line is the file's
                at = Problem(at.file, exc.line, 1, at.path, at.message, "error", at.hint, at.code)
            raise _Refused(at) from None
    return prompt


def _strings(value: Any, path: tuple) -> Iterator[tuple[tuple, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, path + (index,))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, path + (key,))


def _file_prompt(record: Record, lookup: Lookup, written: str, where: tuple, given: str | None) -> Prompt:
    """A prompt file, found as file segments are (the eval file's folder, then its parents)."""
    try:
        path, data = lookup.read(written)  # checked against the root and read from one open file
        if path.suffix.lower() in (".json", ".yaml", ".yml"):
            refuse_foreign_encoding(data[:4], str(path))
            document = load_document(data, str(path), file_format(path))
            if document.error:
                raise _Refused(document.error)
            if isinstance(document.data, list) and document.data and all(is_message(m) for m in document.data):
                return _checked(Prompt(given or written, document.data, Source(str(path), document.locate), ()))
        text = segment_text(data, path)
    except FileReferenceError as exc:
        raise _Refused(problem_at(record, where, exc.message, "error", exc.hint, code="file-reference")) from None
    except ChatconvError as exc:
        raise _Refused(problem_at(record, where, f"prompt file {written!r}: {exc.problems[0].message}",
                                  code="file-reference")) from None
    return _checked(Prompt(given or written, text, Source(str(path), None), ()), text_file=True)
