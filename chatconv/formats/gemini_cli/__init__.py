"""Gemini CLI session recordings (`~/.gemini/tmp/<project hash>/chats/session-*.json`): one JSON
object per session, `{"sessionId", "projectHash", "startTime", "lastUpdated", "messages": [...]}`.

A `user` message's content is its text (or a list of `{"text"}` parts). A `gemini` message is
the model's: its `thoughts` (`{subject, description}`) are reasoning parts, its content text, and
its `toolCalls` tool calls; each call holds its own result (`result`: Gemini `functionResponse`
parts, `status`), which becomes a tool message after the model's, paired by the call's id. A
message's other fields (id, timestamp, tokens, model), a thought's subject and timestamp, and a
call's (status, displayName, description, resultDisplay, ...) stay under
providerOptions["gemini-cli"] where they were. Messages of other types (info, error, warning)
go, with their index, to the conversation's metadata (`entries`), beside the session's own fields.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..reading import Imported, Reading, rest_of

NAME = "gemini-cli"
KEYS = frozenset({"projectHash"})
MESSAGE_TYPES = ("user", "gemini")


def detect(data: Any) -> bool:
    """A session object: its project hash, and messages of a `type` each."""
    return (isinstance(data, dict) and isinstance(data.get("projectHash"), str) and isinstance(data.get("messages"), list)
            and all(isinstance(m, dict) and isinstance(m.get("type"), str) for m in data["messages"]))


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    if not isinstance(data.get("messages"), list):
        reading.error(("messages",) if "messages" in data else (), "a Gemini CLI session holds `messages`, a list",
                      code="wrong-type" if "messages" in data else "missing-key")
        return
    messages, paths, entries = [], [], []
    for index, message in enumerate(data["messages"]):
        path = ("messages", index)
        kind = message.get("type") if isinstance(message, dict) else None
        if kind not in MESSAGE_TYPES:
            if not isinstance(message, dict):
                reading.error(path, "a session message is a JSON object", code="wrong-type")
                return
            entries.append({"index": index, "entry": message})
            continue
        read_now = _user(message, reading, path) if kind == "user" else _gemini(message, reading, path)
        if read_now is None:
            return
        messages += read_now
        paths += [path] * len(read_now)
    session = data.get("sessionId") if isinstance(data.get("sessionId"), str) else None
    metadata = rest_of(data, ("messages", "sessionId"))
    if entries:
        metadata["entries"] = entries
    yield Imported(session, messages, metadata, paths)


def _user(message: dict, reading: Reading, path: tuple) -> list[dict] | None:
    content = message.get("content")
    if isinstance(content, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in content):
        parts = [reading.keep({"type": "text", "text": p["text"]}, {}, rest_of(p, ("text",))) for p in content]
        return [reading.keep({"role": "user", "content": parts}, {}, rest_of(message, ("type", "content")))]
    if not isinstance(content, str):
        reading.error(path + ("content",), "a user message's content is its text or a list of text parts",
                      code="wrong-type")
        return None
    return [reading.keep({"role": "user", "content": content}, {}, rest_of(message, ("type", "content")))]


def _gemini(message: dict, reading: Reading, path: tuple) -> list[dict] | None:
    content, thoughts, calls = message.get("content", ""), message.get("thoughts") or [], message.get("toolCalls") or []
    if not isinstance(content, str) or not isinstance(thoughts, list) or not isinstance(calls, list):
        what = "content" if not isinstance(content, str) else "thoughts" if not isinstance(thoughts, list) else "toolCalls"
        reading.error(path + (what,), f"a gemini message's {what} is {'text' if what == 'content' else 'a list'}",
                      code="wrong-type")
        return None
    parts: list[dict] = []
    for number, thought in enumerate(thoughts):
        if not (isinstance(thought, dict) and isinstance(thought.get("description", ""), str)):
            reading.error(path + ("thoughts", number), "a thought is {subject, description}", code="wrong-type")
            return None
        parts.append(reading.keep({"type": "reasoning", "text": thought.get("description", "")}, {},
                                  rest_of(thought, ("description",))))
    if content:
        parts.append({"type": "text", "text": content})
    results = []
    for number, call in enumerate(calls):
        where = path + ("toolCalls", number)
        if not (isinstance(call, dict) and isinstance(call.get("id"), str) and call["id"]
                and isinstance(call.get("name"), str) and call["name"]):
            reading.error(where, "a tool call needs its id and name", code="wrong-type")
            return None
        parts.append(reading.keep({"type": "tool-call", "toolCallId": call["id"], "toolName": call["name"],
                                   "input": call.get("args", {})}, {"noArgs": True if "args" not in call else None},
                                  rest_of(call, ("id", "name", "args", "result"))))
        if "result" in call:
            results.append({"type": "tool-result", "toolCallId": call["id"], "toolName": call["name"],
                            "output": _output(call["result"], call)})
    # (a null thoughts or toolCalls stays the message's own field, as written)
    known = ("type", "content", *(key for key in ("thoughts", "toolCalls") if isinstance(message.get(key), list)))
    marks = {"noContent": True if "content" not in message else None,
             "thoughts": [] if message.get("thoughts") == [] else None,
             "toolCalls": [] if message.get("toolCalls") == [] else None}
    answer = reading.keep({"role": "assistant", "content": parts}, marks, rest_of(message, known))
    return [answer] + ([{"role": "tool", "content": results}] if results else [])


def _output(result: Any, call: dict) -> dict:
    """A call's result: the text of its one function response's `output` (`error`: an error's
    text) when the response names the call (its id and name), or the result as it is (JSON)."""
    single = isinstance(result, list) and len(result) == 1 and isinstance(result[0], dict) and set(result[0]) == {
        "functionResponse"} and isinstance(result[0]["functionResponse"], dict)
    own = result[0]["functionResponse"] if single else {}
    if single and set(own) <= {"id", "name", "response"} and own.get("id", call["id"]) == call["id"] \
            and own.get("name", call["name"]) == call["name"] and {"id", "name"} <= set(own):
        response = own.get("response")
        if isinstance(response, dict) and len(response) == 1:
            [(key, value)] = response.items()
            if key in ("output", "error") and isinstance(value, str):
                return {"type": "text" if key == "output" else "error-text", "value": value}
    return {"type": "json", "value": result}
