"""OpenAI Responses API: request bodies (`input`, `instructions`), response objects (`object:
"response"` with `output`) and bare lists of items.

Read: message items (an EasyInputMessage, `{role, content}` without a type, is one) of roles
user, assistant, system and developer (their parts: responses_content.py); function_call
(arguments parsed, see reading.tool_input) and custom_tool_call (free-text input) as tool calls;
function_call_output and custom_tool_call_output as tool results; reasoning, each summary_text a
reasoning part. `instructions` become a system message first (kept as instructions), a string
`input` a user message. The items the model gives in a row (reasoning, messages, calls) make one
assistant message and the outputs in a row one tool message; the first part of each item keeps
the item's own fields under `item` (type, id, status, role, encrypted_content, ...) so that the
items can be written back one by one. Items with no place in a model message (web_search_call,
file_search_call, computer_call, mcp_call, ...) are kept whole on the assistant message at their
position (`items`: [{at, item}]), with a warning. The body's own fields become the metadata.

Conversation id: `conversation` when present; else a response's own id, and for a request the
`previous_response_id` it continues (so its function_call_outputs meet the calls of that
response); else none.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..reading import Imported, Reading, rest_of, tool_input
from .content import ASSISTANT_PARTS, USER_PARTS, assistant_parts, joined_text, tool_output, user_parts

NAME = "openai-responses"
ROLES = ("user", "assistant", "system", "developer")
CALLS = ("function_call", "custom_tool_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")
# The API's other items: the provider's own tools and their outputs, references to stored items.
KEPT_WHOLE = ("web_search_call", "file_search_call", "computer_call", "computer_call_output", "image_generation_call",
              "code_interpreter_call", "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output",
              "apply_patch_call", "apply_patch_call_output", "mcp_list_tools", "mcp_call", "mcp_approval_request",
              "mcp_approval_response", "item_reference", "compaction")
ITEM_TYPES = ("message", "reasoning", *CALLS, *OUTPUTS, *KEPT_WHOLE)
# Other formats' (or chatconv's own) marks: a Gemini Interactions record has `input` and `outputs`,
# an Alpaca row `instruction` (a Responses body says `instructions`).
NOT_A_BODY = ("messages", "output", "outputs", "instruction", "steps", "stepIndex", "target")


KEYS = frozenset({"object", "input"})


def detect(data: Any) -> bool:
    """A response object, a request body (`input`, no `messages`), or a list of Responses items.

    A list of `{role, content}` messages alone is OpenAI chat's, unless an item type or a
    Responses part type (input_text, output_text, ...) is there."""
    if isinstance(data, list):
        return bool(data) and all(_is_item(item) for item in data) and any(_has_marks(item) for item in data)
    if not isinstance(data, dict):
        return False
    if data.get("object") == "response":
        return isinstance(data.get("output"), list)
    if any(key in data for key in NOT_A_BODY):
        return False
    value = data.get("input")
    return isinstance(value, str) or (isinstance(value, list) and all(_is_item(item) for item in value))


def is_response(data: dict) -> bool:
    """Whether an object this format reads is a response (not a request body)."""
    return data.get("object") == "response"


def _is_item(item: Any) -> bool:
    """Something shaped as an item: typed (a type read() may refuse, with its path), or a message."""
    return isinstance(item, dict) and (isinstance(item.get("type"), str)
                                       or ("type" not in item and item.get("role") in ROLES))


def _has_marks(item: dict) -> bool:
    content = item.get("content")
    return item.get("type") in ITEM_TYPES or (isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") in (*USER_PARTS, *ASSISTANT_PARTS) for part in content))


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    conversation = Conversation(reading)
    if isinstance(data, list):
        conversation.items(data, ())
        yield Imported(None, conversation.messages, {}, conversation.paths)
        return
    instructions = data.get("instructions")
    if isinstance(instructions, str):
        conversation.add(reading.keep({"role": "system", "content": instructions}, {"instructions": True}),
                         ("instructions",))
    known = ("instructions",) if isinstance(instructions, str) else ()
    if data.get("object") == "response":
        conversation.items(data.get("output"), ("output",))
        known += ("output",)
    elif "input" not in data:  # named with --from, but neither a request nor a response
        reading.error((), "not an OpenAI Responses record: no input (a request) and no object: response",
                      "Responses records are request bodies, response objects or arrays of items", code="unknown-format")
        return
    elif isinstance(data["input"], str):
        conversation.add(reading.keep({"role": "user", "content": data["input"]}, {"inputString": True}), ("input",))
        known += ("input",)
    else:
        conversation.items(data["input"], ("input",))
        known += ("input",)
    yield Imported(_conversation_id(data), conversation.messages, rest_of(data, known), conversation.paths)


def _conversation_id(data: dict) -> str | None:
    named = data.get("conversation")
    named = named.get("id") if isinstance(named, dict) else named
    if isinstance(named, str) and named:
        return named
    own = data.get("id") if data.get("object") == "response" else data.get("previous_response_id")
    return own if isinstance(own, str) and own else None


class Conversation:
    """The model messages read so far, each one's path, and the message items are being added to."""

    def __init__(self, reading: Reading):
        self.reading = reading
        self.messages: list[dict] = []
        self.paths: list[tuple] = []
        self.open: str | None = None  # "assistant" or "tool": the role of the message that takes the next parts

    def add(self, message: dict, path: tuple, open_role: str | None = None) -> None:
        self.messages.append(message)
        self.paths.append(path)
        self.open = open_role

    def message(self, role: str, path: tuple) -> dict:
        """The message of `role` that takes the next item's parts: the open one, or a new one."""
        if self.open != role:
            self.add({"role": role, "content": []}, path, role)
        return self.messages[-1]

    def items(self, items: Any, where: tuple) -> None:
        if not isinstance(items, list):
            self.reading.error(where, "items must be a list", code="wrong-type")
            return
        for index, item in enumerate(items):
            self.item(item, where + (index,))

    def item(self, item: Any, path: tuple) -> None:
        """One item at `path`, its parts added to the conversation (problems said at it)."""
        kind = item.get("type", "message" if "role" in item else None) if isinstance(item, dict) else None
        if kind == "message":
            self._message(item, path)
        elif kind in CALLS:
            payload = "input" if kind == "custom_tool_call" else "arguments"
            self._parts("assistant", _call(item, self.reading, path), item, path, ("call_id", "name", payload))
        elif kind in OUTPUTS:
            self._parts("tool", _result(item, self.reading, path), item, path, ("call_id", "output"))
        elif kind == "reasoning":
            # A reasoning item with no summary keeps its `summary` (empty, or none) with the item.
            known = ("summary",) if item.get("summary") else ()
            self._parts("assistant", _reasoning(item, self.reading, path), item, path, known)
        elif kind in KEPT_WHOLE:
            self._kept_whole(item, kind, path)
        else:
            self.reading.error(path, f"an item of type {kind!r} chatconv cannot read" if kind else
                               "not a Responses item (an object with a type, or a message with a role)",
                               f"items are {', '.join(ITEM_TYPES)}", code="wrong-type")

    def _parts(self, role: str, parts: list[dict] | None, item: dict, path: tuple, known: tuple) -> None:
        """The item's parts added to the open message of `role`; the first keeps the item's fields."""
        if parts is None:
            return
        self.reading.keep(parts[0], {"item": rest_of(item, known)})
        self.message(role, path)["content"].extend(parts)

    def _message(self, item: dict, path: tuple) -> None:
        role, content, reading = item.get("role"), item.get("content"), self.reading
        if role not in ROLES:
            reading.error(path + ("role",), f"a message's role is one of {', '.join(ROLES)}", code="wrong-type")
            return
        if role == "assistant":
            self._parts("assistant", assistant_parts(content, reading, path), item, path, ("content",))
            return
        rest = rest_of(item, ("role", "content"))
        if role in ("system", "developer"):
            text = content if isinstance(content, str) else joined_text(content, reading, path)
            if text is not None:
                self.add(reading.keep({"role": "system", "content": text},
                                      {"role": "developer" if role == "developer" else None,
                                       "content": content if not isinstance(content, str) else None}, rest), path)
            return
        parts = content if isinstance(content, str) else user_parts(content, reading, path)
        if parts is not None:
            self.add(reading.keep({"role": "user", "content": parts}, {}, rest), path)

    def _kept_whole(self, item: dict, kind: str, path: tuple) -> None:
        message = self.message("assistant", path)
        kept_items = message.setdefault("providerOptions", {}).setdefault(NAME, {}).setdefault("items", [])
        kept_items.append({"at": len(message["content"]), "item": item})
        self.reading.warn(path, f"a {kind} item has no place in a model message: kept whole under "
                          f"providerOptions.{NAME}.items of the assistant message", code="import-changed")


def _call(item: dict, reading: Reading, path: tuple) -> list[dict] | None:
    call_id, name, custom = item.get("call_id"), item.get("name"), item["type"] == "custom_tool_call"
    payload = "input" if custom else "arguments"
    if not (isinstance(call_id, str) and call_id and isinstance(name, str) and name and payload in item):
        reading.error(path, f"a {item['type']} item needs its call_id, name and {payload}", code="missing-key")
        return None
    if custom:  # a custom tool's input is free text, as it is
        if not isinstance(item["input"], str):
            reading.error(path + ("input",), "a custom_tool_call's input is a string", code="wrong-type")
            return None
        value, keep = item["input"], {}
    else:
        value, keep = tool_input(item["arguments"], reading, path + ("arguments",))
    part = {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": value}
    return [reading.keep(part, {**keep, "argumentsObject": True if not custom and not isinstance(
        item["arguments"], str) else None})]


def _result(item: dict, reading: Reading, path: tuple) -> list[dict] | None:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id or "output" not in item:
        reading.error(path, f"a {item['type']} item needs the call_id of the call it answers and its output",
                      code="missing-key")
        return None
    output = tool_output(item["output"], reading, path)
    # The tool's name is the call's: the importer gives it, by call_id, across the conversation.
    part = {"type": "tool-result", "toolCallId": call_id, "toolName": "", "output": output}
    return None if output is None else [part]


def _reasoning(item: dict, reading: Reading, path: tuple) -> list[dict] | None:
    summary = item.get("summary", [])
    if not isinstance(summary, list) or not all(isinstance(s, dict) and s.get("type") == "summary_text"
                                                and isinstance(s.get("text"), str) for s in summary):
        reading.error(path + ("summary",), "a reasoning item's summary is a list of summary_text parts (type, text)",
                      code="wrong-type")
        return None
    if not summary:  # reasoning with no summary (encrypted_content only, often): an empty part holds the item
        return [reading.keep({"type": "reasoning", "text": ""}, {"noSummary": True})]
    return [reading.keep({"type": "reasoning", "text": s["text"]}, {}, rest_of(s, ("type", "text"))) for s in summary]
