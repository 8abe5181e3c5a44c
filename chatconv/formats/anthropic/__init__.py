"""Anthropic Messages: request bodies (`system` + `messages`), response objects (`"type":
"message"`), a request with its response ({"request", "response"}), and message lists.

Read: `system` (a string: one system message; a list of text blocks: a system message each, as
the AI SDK gives them), user and assistant messages, their blocks (anthropic_blocks.py). A user
message's tool_result blocks become tool messages and its other blocks user messages, in the
order they came; the messages after the first of one Anthropic message are marked `joined`, so
that export writes them back as one. The body's other fields (model, max_tokens, tools,
tool_choice, thinking, ...) are the conversation's metadata; a response's fields stay on its
assistant message under `response`, and its id names the conversation.
"""

from __future__ import annotations

from typing import Any, Iterator

from .blocks import read_block, write_block
from ..reading import Imported, Reading, free_of_marks, kept, rest_of
from ..bedrock_converse import detect as is_converse

NAME = "anthropic"
TARGET = "anthropic"
ROLES = ("user", "assistant")
MARK_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "mcp_tool_use")
_MARKS = ("joined", "system", "response", "record")


KEYS = frozenset({"request", "type", "messages"})


def detect(data: Any) -> bool:
    """A request with `system`, a response, a request with its response, or messages (a body's
    or a list) holding blocks only Anthropic writes: a plain `{"messages": [...]}` is OpenAI's."""
    if isinstance(data, list):
        return _is_messages(data) and _marked(data)
    if not isinstance(data, dict):
        return False
    if "request" in data and "response" in data:
        return _is_response(data["response"]) and isinstance(data["request"], dict) and _is_messages(data["request"].get("messages"))
    if _is_response(data):
        return True
    messages = data.get("messages")  # marks first: most bodies of messages are OpenAI's, told apart at once
    return (isinstance(messages, list) and ("system" in data or _marked(messages)) and _is_messages(messages)
            and not is_converse(data))  # Bedrock Converse has `system` too, and blocks keyed by kind


def is_response(data: dict) -> bool:
    """Whether an object this format reads is a response (not a request body): exchanges.py asks."""
    return _is_response(data)


def _is_response(data: Any) -> bool:
    return (isinstance(data, dict) and data.get("type") == "message" and data.get("role") == "assistant"
            and isinstance(data.get("content"), list))


def _is_messages(messages: Any) -> bool:
    return isinstance(messages, list) and all(isinstance(m, dict) and m.get("role") in ROLES for m in messages)


def _marked(messages: list) -> bool:
    return any(isinstance(block, dict) and (block.get("type") in MARK_BLOCKS or
                                            block.get("type") in ("image", "document") and "source" in block)
               for message in messages if isinstance(message, dict) and isinstance(message.get("content"), list)
               for block in message["content"])


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    if isinstance(data, list):
        messages, paths = read_messages(data, reading, ())
        yield Imported(None, messages, {}, paths)
    elif not _is_shaped(data, reading):
        return  # its problem is said
    elif "request" in data and "response" in data:
        yield _exchange(data, reading)
    elif _is_response(data):
        message, paths = _response(data, reading, ())
        yield Imported(data["id"] if isinstance(data.get("id"), str) else None, message, {}, paths)
    else:
        yield _request(data, reading, ())


def _is_shaped(data: dict, reading: Reading) -> bool:
    """Whether a record has what the reading of its kind needs (as --from anthropic may force on
    any object): a body its `messages` list, a response its `content` list, an exchange both
    parts as objects; an error at the place that lacks it, else."""
    if "request" in data and "response" in data:
        parts = [(key, data[key]) for key in ("request", "response") if not isinstance(data[key], dict)]
        if parts:
            reading.error((parts[0][0],), f"the exchange's {parts[0][0]} must be an object", code="wrong-type")
            return False
        return (_has_list(data["request"], "messages", reading, ("request",))
                and _has_list(data["response"], "content", reading, ("response",)))
    key = "content" if data.get("type") == "message" else "messages"
    return _has_list(data, key, reading, ())


def _has_list(data: dict, key: str, reading: Reading, where: tuple) -> bool:
    if isinstance(data.get(key), list):
        return True
    reading.error(where + (key,) if key in data else where, f"an Anthropic {'response' if key == 'content' else 'body'} "
                  f"holds `{key}`, a list", code="wrong-type" if key in data else "missing-key")
    return False


def _request(data: dict, reading: Reading, where: tuple) -> Imported:
    system, system_paths = _system(data.get("system"), reading, where)
    messages, paths = read_messages(data["messages"], reading, where + ("messages",))
    metadata = rest_of(data, ("messages", "system") if system else ("messages",))
    return Imported(None, system + messages, metadata, system_paths + paths)


def _exchange(data: dict, reading: Reading) -> Imported:
    imported = _request(data["request"], reading, ("request",))
    reply, paths = _response(data["response"], reading, ("response",))
    if reply:
        reading.keep(reply[0], {"record": rest_of(data, ("request", "response")) or None})
    response_id = data["response"].get("id")
    return Imported(response_id if isinstance(response_id, str) else None, imported.messages + reply,
                    imported.metadata, imported.paths + paths)


def _response(data: dict, reading: Reading, where: tuple) -> tuple[list[dict], list[tuple]]:
    messages, paths = read_messages([{"role": "assistant", "content": data["content"]}], reading, where, (where,))
    if messages:
        reading.keep(messages[0], {"response": rest_of(data, ("role", "content"))})
    return messages, paths


def _system(system: Any, reading: Reading, where: tuple) -> tuple[list[dict], list[tuple]]:
    """System text: a string, one message; text blocks, one message each (their fields kept)."""
    path = where + ("system",)
    if system is None or system == []:
        return [], []
    if isinstance(system, str):
        return [{"role": "system", "content": system}], [path]
    if isinstance(system, list) and all(isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
                                        for b in system):
        if not all(free_of_marks(b, _MARKS, (), reading, path + (i,)) for i, b in enumerate(system)):
            return [], []
        return ([reading.keep({"role": "system", "content": block["text"]},
                              {"system": "blocks"}, rest_of(block, ("type", "text"))) for block in system],
                [path + (index,) for index in range(len(system))])
    reading.error(path, "system must be a string or a list of text blocks", code="wrong-type")
    return [], []


def read_messages(messages: list, reading: Reading, where: tuple,
                  own_paths: tuple | None = None) -> tuple[list[dict], list[tuple]]:
    """Model messages of Anthropic messages, and each one's path (problems go to `reading`)."""
    out: list[dict] = []
    paths: list[tuple] = []
    for index, message in enumerate(messages):
        path = own_paths[index] if own_paths else where + (index,)
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            reading.error(path, "not an Anthropic message (role must be user or assistant)", code="wrong-type")
            continue
        converted = read_message(message, reading, path)
        out.extend(converted)
        paths.extend([path] * len(converted))
    return out, paths


def read_message(message: dict, reading: Reading, path: tuple) -> list[dict]:
    """The model messages of one Anthropic message: one, or for a user message with tool results
    a run of tool and user messages, the later ones marked `joined`. None read: []."""
    role, content = message["role"], message.get("content")
    if not free_of_marks(message, _MARKS, (), reading, path):
        return []
    if isinstance(content, str):
        runs = [{"role": role, "content": content}]
    elif isinstance(content, list):
        runs = []
        for index, block in enumerate(content):
            part = read_block(block, reading, path + ("content", index), role)
            if part is None:
                return []
            target = "tool" if role == "user" and part["type"] == "tool-result" else role
            if not runs or runs[-1]["role"] != target:
                runs.append({"role": target, "content": []})
            runs[-1]["content"].append(part)
        runs = runs or [{"role": role, "content": []}]
    else:
        reading.error(path + ("content",), f"{role} content must be a string or a list of blocks", code="wrong-type")
        return []
    reading.keep(runs[0], {}, rest_of(message, ("role", "content")))
    for later in runs[1:]:
        reading.keep(later, {"joined": True})
    return runs


# ---------------------------------------------------------------------------------------------
# Writing a body


def write(messages: list[dict], metadata: dict, gather_tools: bool = False, notes: list | None = None) -> dict:
    """A Messages request body: `system` as it was read (a string, or text blocks), the messages
    (the runs of one Anthropic message joined back), then what import kept of the body.

    What the API has no place for is left out, each noted in `notes` as (message index, problem
    code, what): text of white space only, reasoning without its signature, media it cannot take
    (anthropic_blocks.write_block); a message left with nothing is left out whole."""
    notes = notes if notes is not None else []
    system = [m for m in messages if m["role"] == "system"]
    body: dict[str, Any] = {}
    if system:
        blocks = [{"type": "text", "text": m["content"], **_extra(m)} for m in system]
        marked = any(kept(m, NAME).get("system") == "blocks" for m in system)
        body["system"] = blocks if marked else "\n\n".join(m["content"] for m in system)
    body["messages"] = write_messages([(i, m) for i, m in enumerate(messages) if m["role"] != "system"], NAME, notes)
    return {**body, **metadata}


def write_messages(messages: list[tuple[int, dict]], name: str, notes: list) -> list[dict]:
    """The Messages API's messages of (index, model message) pairs. A message left with no block
    is left out; the messages of one role on either side of it then become one (as joined)."""
    out: list[dict] = []
    left_out = False
    for index, message in messages:
        own = kept(message, name)
        role = "user" if message["role"] == "tool" else message["role"]
        content = message["content"]
        if isinstance(content, str) and not content.strip():
            notes.append((index, "blank-text", "a text of white space only is left out (Anthropic refuses it)"))
            blocks: Any = []
        elif isinstance(content, str):
            blocks = content
        else:
            blocks = [block for block in (write_block(part, name, index, notes, message["role"]) for part in content)
                      if block is not None]
        if not blocks and (content or isinstance(content, str)):  # each part left out is noted
            left_out = True
            continue
        if (own.get("joined") or left_out) and out and out[-1]["role"] == role:
            previous = out[-1]["content"]
            out[-1]["content"] = ([{"type": "text", "text": previous}] if isinstance(previous, str) else previous) + (
                [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks)
            left_out = False
            continue
        out.append({"role": role, "content": blocks, **_extra(message, name)})
        left_out = False
    return out


def _extra(item: dict, name: str = NAME) -> dict:
    return {key: value for key, value in kept(item, name).items() if key not in _MARKS}
