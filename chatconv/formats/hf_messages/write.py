"""Hugging Face rows written back from model messages (__init__ reads them): each message as
openai-chat writes it, then put back in the form it was read in (the marks under
providerOptions["hf-messages"]), the row's other columns after them.
"""

from __future__ import annotations

from typing import Any

from ..openai_chat import NAME as OPENAI
from ..openai_chat.body import written_message
from ..reading import kept

NAME = "hf-messages"
SPLIT = ("prompt", "completion")  # TRL's prompt-completion row



def write(messages: list[dict], metadata: dict, gather_tools: bool = False, notes: list | None = None) -> Any:
    """A row of the messages, each written as openai-chat writes it, then put back in the form it
    was read in (marks under providerOptions["hf-messages"]); the row's other columns after them."""
    notes = notes if notes is not None else []
    out, starts = written_lists(messages, notes)
    # where the completion starts, in a prompt-completion row
    split = next((starts[i] for i, m in enumerate(messages) if kept(m, NAME).get("completion")), None)
    form = kept(messages[0], NAME).get("row") if messages else None
    if form == "list":
        return out
    if form == "prompt-completion" and all(key in metadata for key in SPLIT):
        split = len(out) if split is None else split
        return {**metadata, "prompt": out[:split], "completion": out[split:]}
    if form == "placed" and "messages" in metadata:
        return {**metadata, "messages": out}
    return {"messages": out, **metadata}


def written_lists(messages: list[dict], notes: list) -> tuple[list[dict], list[int]]:
    """The messages as the Hub's rows hold them, and where each message's entries start."""
    out: list[dict] = []
    starts = []
    for index, message in enumerate(messages):
        starts.append(len(out))
        own_notes: list = []
        entries = written_message(message, index, own_notes)
        if any(kept(p, OPENAI).get("argumentsObject") for p in _parts(message)):  # written as objects again below
            own_notes = [note for note in own_notes if note[1] != "export-changed"]
        notes += own_notes
        out += [undone(entry, message) for entry in entries]
    return out, starts


def _parts(message: dict) -> list[dict]:
    return message["content"] if isinstance(message["content"], list) else []


def undone(entry: dict, message: dict) -> dict:
    """An entry openai-chat wrote, with what import put in OpenAI's form put back."""
    parts = _parts(message)
    if entry.get("role") == "tool":
        part = next(p for p in parts if p["type"] == "tool-result" and p["toolCallId"] == entry.get("tool_call_id"))
        if kept(part, NAME).get("noId"):
            entry = {k: v for k, v in entry.items() if k != "tool_call_id"}
        return _in_order({**entry, **(kept(part, NAME).get("fields") or {})}, kept(part, NAME).get("keys"))
    if isinstance(entry.get("tool_calls"), list):
        calls = [p for p in parts if p["type"] == "tool-call" and not p.get("providerExecuted")]
        entry["tool_calls"] = [_call_undone(call, part) for call, part in zip(entry["tool_calls"], calls)]
    if entry.get("role") == "user" and isinstance(entry.get("content"), list):
        entry["content"] = [_part_undone(written, part) for written, part in zip(entry["content"], parts)]
    return _in_order({**entry, **(kept(message, NAME).get("fields") or {})}, kept(message, NAME).get("keys"))


def _in_order(entry: dict, keys: Any) -> dict:
    """The entry with its keys in the order read (those it no longer has left out, new ones after)."""
    if not isinstance(keys, list):
        return entry
    return {**{key: entry[key] for key in keys if key in entry}, **entry}


def _call_undone(call: dict, part: dict) -> dict:
    if kept(part, OPENAI).get("argumentsObject") and isinstance(call.get("function"), dict):
        call["function"]["arguments"] = part.get("input")
    return {k: v for k, v in call.items() if k != "id"} if kept(part, NAME).get("noId") else call


def _part_undone(written: dict, part: dict) -> dict:
    own = kept(part, NAME)
    if own.get("value") and part["type"] == "text":
        return {key if key != "text" else "value": value for key, value in written.items()}
    if not isinstance(own.get("part"), dict):
        return written
    source = part.get("image") if part["type"] == "image" else part.get("data")
    hub = dict(own["part"])
    if own.get("column"):
        return hub
    if isinstance(own.get("object"), dict):  # the object it was, its url the part's file now
        source = {**own["object"], "url": source}
    items = list(hub.items())
    items.insert(own.get("at") or 0, (own.get("key") or "image", source))
    return dict(items)
