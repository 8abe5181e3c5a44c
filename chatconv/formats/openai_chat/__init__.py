"""OpenAI Chat Completions: message lists, request bodies (fine-tuning lines are request bodies
too: `messages` + `tools`) and response objects (`choices`).

Read: roles system, developer (a system message, kept as developer), user, assistant, tool and
the legacy function; content parts text, image_url, input_audio, file and refusal; tool_calls
(arguments parsed, see reading.tool_input), the legacy function_call, and refusal. Every other
field stays under providerOptions["openai-chat"] of the message or part it was on; the body's
own fields (model, tools, settings) become the conversation's metadata.
"""

from __future__ import annotations

from typing import Any, Iterator

from ...problems import ChatconvError
from ...sources import Record
from .body import MESSAGE_MARKS, NAME, PART_MARKS, TARGET, write
from .calls import legacy_call, tool_call, tool_message
from .common import common_message
from .parts import user_parts
from ..reading import Imported, Reading, free_of_marks, name_results, rest_of

__all__ = ["NAME", "TARGET", "detect", "from_openai_messages", "read", "to_model_messages", "write"]
ROLES = ("system", "developer", "user", "assistant", "tool", "function")
PART_TYPES = ("text", "image_url", "input_audio", "file", "refusal")


KEYS = frozenset({"choices", "messages"})


def detect(data: Any) -> bool:
    """A message list, a request body (`messages`) or a response object (`choices`) of OpenAI's."""
    if isinstance(data, list):
        return _is_message_list(data)
    if not isinstance(data, dict):
        return False
    if "choices" in data:
        return isinstance(data["choices"], list) and all(
            isinstance(c, dict) and isinstance(c.get("message"), dict) for c in data["choices"])
    return "system" not in data and _is_message_list(data.get("messages"))


def is_response(data: dict) -> bool:
    """Whether an object this format reads is a response (not a request body)."""
    return "choices" in data


def _is_message_list(messages: Any) -> bool:
    return isinstance(messages, list) and bool(messages) and all(map(_is_message, messages))


def _is_message(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        return False
    content = message.get("content")
    if isinstance(content, list):
        return all(isinstance(part, dict) and part.get("type") in PART_TYPES for part in content)
    return content is None or isinstance(content, str)


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    if isinstance(data, list):
        messages, paths = read_messages(data, reading, ())
        yield Imported(None, messages, {}, paths)
        return
    key = "choices" if "choices" in data else "messages"
    if not isinstance(data.get(key), list):  # as --from openai-chat may force on any object
        reading.error((key,) if key in data else (), f"an OpenAI chat {'response' if key == 'choices' else 'body'} "
                      f"holds `{key}`, a list", code="wrong-type" if key in data else "missing-key")
        return
    if key == "messages":
        messages, paths = read_messages(data["messages"], reading, ("messages",))
        yield Imported(None, messages, rest_of(data, ("messages",)), paths)
        return
    yield from _choices(data, reading)


def _choices(data: dict, reading: Reading) -> Iterator[Imported]:
    """Each choice of a response object: a conversation of its one message, named by the response id."""
    response = rest_of(data, ("choices",))
    if not data["choices"]:  # no choice: nothing to import, which the importer says
        yield Imported(None, [], response, [])
    for index, choice in enumerate(data["choices"]):
        where = ("choices", index, "message")
        if not (isinstance(choice, dict) and isinstance(choice.get("message"), dict)):
            reading.error(where[:2], "a choice holds its `message`, an object", code="wrong-type")
            continue
        message = _checked_message(choice["message"], reading, where, {})
        if message is None:
            continue  # its problem is said
        reading.keep(message, {"choice": rest_of(choice, ("message",)) or None, "response": response or None})
        conversation_id = data.get("id") if isinstance(data.get("id"), str) else None
        if conversation_id is not None and index:
            conversation_id = f"{conversation_id}#{index}"
        yield Imported(conversation_id, [message], {}, [where])


def to_model_messages(messages: list[dict]) -> list[dict]:
    return from_openai_messages(messages)


def from_openai_messages(messages: list[dict]) -> list[dict]:
    """An OpenAI chat log (a list of messages) as AI SDK model messages.

    ChatconvError, naming the message and field, for anything that cannot be read; what has no
    place in a model message is kept under providerOptions["openai-chat"]."""
    if not isinstance(messages, list):
        messages = [messages]
    reading = Reading(Record("<openai log>", 1, data=messages), NAME)
    converted, paths = read_messages(messages, reading, ())
    name_results(Imported(None, converted, {}, paths), reading, {})
    if reading.failed:
        raise ChatconvError([p for p in reading.problems if p.is_error])
    return converted


# ---------------------------------------------------------------------------------------------
# Reading messages


def read_messages(messages: Any, reading: Reading, where: tuple) -> tuple[list[dict], list[tuple]]:
    """The model messages of OpenAI's, and each one's path; problems through `reading`."""
    out, paths = [], []
    legacy_calls: dict[str, list[str]] = {}  # function name -> ids given to its unanswered function_calls
    for index, message in enumerate(messages):
        converted = common_message(message) or _checked_message(message, reading, where + (index,), legacy_calls)
        if converted is not None:
            out.append(converted)
            paths.append(where + (index,))
    return out, paths


def _checked_message(message: Any, reading: Reading, path: tuple, legacy_calls: dict) -> dict | None:
    """One message at `path`, as a model message; None, with its problem, if it cannot be read."""
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        reading.error(path, f"not an OpenAI chat message (role must be one of {', '.join(ROLES)})", code="wrong-type")
        return None
    if not _free_of_marks(message, reading, path):
        return None
    return _message(message, reading, path, legacy_calls)


def _free_of_marks(message: dict, reading: Reading, path: tuple) -> bool:
    """Whether no field of the message, its parts or its calls is named like a mark kept beside
    them (openai_chat_body reads the marks back); an error at the first that is."""
    if len(message) == 2 and isinstance(message.get("content"), str):
        return True  # role and content: read into the model message
    tool = message["role"] in ("tool", "function")  # its fields are kept on its result part
    if not free_of_marks(message, PART_MARKS if tool else MESSAGE_MARKS, ("role", "content"), reading, path):
        return False
    content, calls = message.get("content"), message.get("tool_calls")
    parts = [(("content", i), p, ("type", p.get("type"))) for i, p in enumerate(content)
             if isinstance(p, dict)] if isinstance(content, list) and not tool else []
    parts += [(("tool_calls", i), c, ("id", "type", "function", "custom")) for i, c in enumerate(calls)
              if isinstance(c, dict)] if isinstance(calls, list) else []
    return all(free_of_marks(item, PART_MARKS, consumed, reading, path + where) for where, item, consumed in parts)


def _message(message: dict, reading: Reading, path: tuple, legacy_calls: dict) -> dict | None:
    role, content = message["role"], message.get("content")
    if role in ("system", "developer"):
        text = content if isinstance(content, str) else _joined_text(content, reading, path)
        if text is None:
            return None
        converted = {"role": "system", "content": text}
        return reading.keep(converted, {"role": "developer" if role == "developer" else None,
                                        "content": content if not isinstance(content, str) else None},
                            rest_of(message, ("role", "content")))
    if role == "user":
        parts = content if isinstance(content, str) else user_parts(content, reading, path)
        return None if parts is None else reading.keep({"role": "user", "content": parts}, {},
                                                       rest_of(message, ("role", "content")))
    if role == "assistant":
        return _assistant(message, reading, path, legacy_calls)
    return tool_message(message, reading, path, legacy_calls)


def _joined_text(content: Any, reading: Reading, path: tuple) -> str | None:
    """System text written as text parts (OpenAI allows it): the parts' text, joined."""
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                         and isinstance(p.get("text"), str) for p in content):
        return "\n".join(p["text"] for p in content)
    reading.error(path + ("content",), "system content must be a string or text parts", code="wrong-type")
    return None


def _assistant(message: dict, reading: Reading, path: tuple, legacy_calls: dict) -> dict | None:
    content, parts = message.get("content"), []
    if isinstance(content, list):
        for index, part in enumerate(content):
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(reading.keep({"type": "text", "text": part["text"]}, {}, rest_of(part, ("type", "text"))))
            elif isinstance(part, dict) and part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                parts.append(reading.keep({"type": "text", "text": part["refusal"]}, {"refusal": True},
                                          rest_of(part, ("type", "refusal"))))
            else:
                reading.error(path + ("content", index), "assistant content parts are text or refusal",
                              code="wrong-type")
                return None
    elif isinstance(content, str):
        parts.append({"type": "text", "text": content})
    elif content is not None:
        reading.error(path + ("content",), "assistant content must be a string, parts or null", code="wrong-type")
        return None
    if isinstance(message.get("refusal"), str):
        parts.append(reading.keep({"type": "text", "text": message["refusal"]}, {"refusal": True}))
    calls = message.get("tool_calls")
    for key, kind in (("tool_calls", list), ("function_call", dict)):
        if message.get(key) is not None and not isinstance(message[key], kind):
            reading.error(path + (key,), f"{key} must be {'a list of tool calls' if kind is list else 'an object'}"
                          " or null", code="wrong-type")
            return None
    for index, call in enumerate(calls if isinstance(calls, list) else []):
        converted = tool_call(call, reading, path + ("tool_calls", index))
        if converted is None:
            return None
        parts.append(converted)
    if isinstance(message.get("function_call"), dict):
        converted = legacy_call(message["function_call"], reading, path, legacy_calls)
        if converted is None:
            return None
        parts.append(converted)
    plain = isinstance(content, str) and len(parts) == 1
    # A null refusal (as responses write it) is the source's own field, kept as it is.
    # A null or empty tool_calls, a null function_call: the source's own fields too.
    known = ("role", "content") + (("tool_calls",) if calls else ()) \
        + (("function_call",) if message.get("function_call") is not None else ()) \
        + (("refusal",) if isinstance(message.get("refusal"), str) else ())
    converted = {"role": "assistant", "content": content if plain else parts}
    return reading.keep(converted, {"contentParts": True if isinstance(content, list) else None,
                                    "noContent": True if "content" not in message else None},
                        rest_of(message, known))
