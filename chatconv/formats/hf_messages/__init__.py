"""Hugging Face chat datasets: rows of `{"messages": [{"role", "content"}, ...], ...}` as TRL,
LLaMA-Factory, Axolotl and the Hub's chat templates take them, TRL's conversational
prompt-completion rows (`{"prompt": [...], "completion": [...]}`), and bare message lists.

Messages are OpenAI's chat messages with the Hub's liberties, which tell a row apart from an
OpenAI fine-tuning line (detect): tool calls with no id or with arguments as an object, tool
messages with no tool_call_id (each answers the earliest call not yet answered), media parts
that name their file or stand for the row's `images`/`videos`/`audios` column (`{"type": "image"}`),
LLaMA-Factory's `{"type": "text", "value": ...}`, media columns. The messages are read by
openai-chat's reader once these are put in OpenAI's form, each change marked under
providerOptions["hf-messages"]; export writes them as openai-chat does, then undoes each mark:
import then export gives the same JSON value, key order too. Ids chatconv gives (`call_<m>_<n>`)
are never written back. The row's other columns are the conversation's metadata.
"""

from __future__ import annotations

import mimetypes
from typing import Any, Iterator

from ..openai_chat import NAME as OPENAI, read_messages
from ..openai_chat.body import ASSISTANT_REQUEST_FIELDS, BODY_FIELDS, MESSAGE_MARKS, PART_MARKS, written_message
from ..reading import Imported, Reading, kept
from .write import NAME, SPLIT, undone, write, written_lists

__all__ = ["NAME", "detect", "read", "read_lists", "takes_list", "write", "written_lists"]
TARGET = None  # no API's rules: a dataset's rows
MEDIA_COLUMNS = ("images", "videos", "audios")
KEYS = frozenset({"messages", "completion", *MEDIA_COLUMNS})
MEDIA_PARTS = {"image": "images", "video": "videos", "audio": "audios"}  # a media part's type, and its column
_SOURCE_KEYS = ("image", "video", "audio", "url", "path")  # where a media part names its file, if it does
# A message's own fields that Chat Completions takes (an assistant's; `name` of the others)
API_MESSAGE_FIELDS = ASSISTANT_REQUEST_FIELDS - {"function_call", "tool_calls"}


def detect(data: Any) -> bool:
    """A row of TRL's prompt-completion lists, or a `messages` row (or a bare list of messages)
    with a mark of the Hub's."""
    if isinstance(data, list):
        return _is_message_list(data) and any(map(_hub_marked, data))
    if not isinstance(data, dict) or "chosen" in data or "rejected" in data or "choices" in data:
        return False
    if all(_is_message_list(data.get(key)) for key in SPLIT):
        return True
    messages = data.get("messages")
    if not _is_message_list(messages):
        return False
    # A column no Chat Completions body has (an id, a source, image sizes) makes a dataset's row, of
    # messages in OpenAI's shapes (not Anthropic's `system` body, an inspect sample's `input`).
    return any(map(_hub_marked, messages)) or (
        not BODY_FIELDS.issuperset(data) and "system" not in data and "input" not in data
        and all(_typed_content(m.get("content")) for m in messages))


def _typed_content(content: Any) -> bool:
    """Text, none, or parts that say their type (Bedrock's blocks say it by their key)."""
    return content is None or isinstance(content, str) or (
        isinstance(content, list) and all(isinstance(p, dict) and "type" in p for p in content))


def takes_list(data: list) -> bool:
    """Whether --from hf-messages reads a list as one row: any list of messages (detection leaves
    those with no mark of the Hub's to openai-chat)."""
    return _is_message_list(data)


def _is_message_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) for m in value)


def _hub_marked(message: dict) -> bool:
    """Whether a message has one of the Hub's liberties that OpenAI's API does not take."""
    if message["role"] == "tool" and "tool_call_id" not in message and isinstance(message.get("content"), str):
        return True  # (a model message's tool results are parts, each naming its call)
    calls = message.get("tool_calls")
    if isinstance(calls, list) and any(isinstance(c, dict) and ("id" not in c or (
            isinstance(c.get("function"), dict) and not isinstance(c["function"].get("arguments", ""), str)))
            for c in calls):
        return True
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and isinstance(p.get("type"), str) and (
        (p["type"] in MEDIA_PARTS and "source" not in p)  # Anthropic's media blocks have a source
        or (p["type"] == "text" and "value" in p and "text" not in p)) for p in content)


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    if isinstance(data, list):
        lists, metadata = [((), data)], {}
    elif isinstance(data, dict) and all(isinstance(data.get(key), list) for key in SPLIT):
        lists = [((key,), data[key]) for key in SPLIT]
        # The row with each list's length in its place: export puts the lists back there.
        metadata = {key: len(value) if key in SPLIT else value for key, value in data.items()}
    elif isinstance(data, dict) and isinstance(data.get("messages"), list):
        lists = [(("messages",), data["messages"])]
        metadata = {key: value for key, value in data.items() if key != "messages"}
        if next(iter(data)) != "messages":  # its place, when not first
            metadata = {key: len(value) if key == "messages" else value for key, value in data.items()}
    else:
        reading.error(("messages",) if isinstance(data, dict) and "messages" in data else (),
                      "a Hugging Face chat row holds `messages` (or TRL's `prompt` and `completion`), a list of "
                      "messages", code="wrong-type" if isinstance(data, dict) and "messages" in data else "missing-key")
        return
    read_now = read_lists(lists, data, reading)
    if read_now is None:
        return
    messages, paths = read_now
    if len(lists) == 2 and len(messages) > len(data["prompt"]):
        reading.keep(messages[len(data["prompt"])], {"completion": True})  # where export splits the row
    if messages:  # the row's form: a list, TRL's prompt-completion, or messages after other columns
        form = "list" if isinstance(data, list) else "prompt-completion" if len(lists) == 2 else (
            "placed" if isinstance(metadata.get("messages"), int) else None)
        reading.keep(messages[0], {"row": form})
    yield Imported(None, messages, metadata, paths)


def read_lists(lists: list[tuple[tuple, list]], data: Any, reading: Reading) -> tuple[list, list] | None:
    """The messages of one conversation written as lists (each at its path in `data`), and each
    one's path; None when one cannot be read (the problem is said). The marks go under
    providerOptions["hf-messages"], whichever format reads (preference rows read theirs here)."""
    hub_reading = reading if reading.format == NAME else Reading(reading.record, NAME, reading.problems)
    columns = {kind: _column(data, column) for kind, column in MEDIA_PARTS.items()} if isinstance(data, dict) else {}
    inner = Reading(reading.record, OPENAI, reading.problems)  # problems said once, in one list
    waiting: list[str] = []  # ids of the calls not yet answered, oldest first
    messages, paths = [], []
    for where, source in lists:
        # (an id given to a call names the message's place in the whole row: the lists' ids are one row's)
        hub = [_in_openai_form(message, len(messages) + index, where, index, waiting, columns, hub_reading)
               for index, message in enumerate(source)]
        if reading.failed:
            return None
        read_now, read_paths = read_messages([form for form, _ in hub], inner, where)
        if reading.failed:
            return None
        for index, (message, (_, marks)) in enumerate(zip(read_now, hub)):
            _mark(message, marks, hub_reading)
            _own_fields(message, hub_reading)
            _keep_order(message, source[index], index, hub_reading)
        messages += read_now
        paths += read_paths
    return messages, paths


def _column(data: dict, column: str) -> list | None:
    value = data.get(column)
    return list(value) if isinstance(value, list) else None


def _in_openai_form(message: Any, number: int, where: tuple, index: int, waiting: list[str], columns: dict,
                    reading: Reading) -> tuple[Any, dict]:
    """The message as OpenAI's chat API has it, and the marks that undo each change: {"calls":
    {n: mark}, "parts": {n: mark}, "result": mark}."""
    if not isinstance(message, dict):
        return message, {}
    marks: dict[str, Any] = {}
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        written, call_marks = [], {}
        for place, call in enumerate(calls):
            if isinstance(call, dict) and "id" not in call:
                call = {"id": f"call_{number}_{place}", **call}
                call_marks[place] = {"noId": True}
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                waiting.append(call["id"])
            written.append(call)
        message = {**message, "tool_calls": written}
        marks["calls"] = call_marks
    if message.get("role") == "tool":
        if "tool_call_id" not in message:
            # none waiting: an orphan, which the importer refuses
            message = {**message, "tool_call_id": waiting.pop(0) if waiting else f"call_{number}"}
            marks["result"] = {"noId": True}
        elif message["tool_call_id"] in waiting:
            waiting.remove(message["tool_call_id"])
    content = message.get("content")
    if isinstance(content, list) and message.get("role") == "user":
        parts, part_marks = [], {}
        for at, part in enumerate(content):
            converted = _part_in_openai_form(part, columns, reading, where + (index, "content", at))
            if converted is not None:
                part, part_marks[at] = converted
            parts.append(part)
        message = {**message, "content": parts}
        marks["parts"] = part_marks
    return message, marks


def _part_in_openai_form(part: Any, columns: dict, reading: Reading, path: tuple) -> tuple[dict, dict] | None:
    """A Hub part as a text part of OpenAI's, and its mark (the model part that replaces it, for
    media); None for a part OpenAI's reader reads as it is."""
    if not isinstance(part, dict):
        return None
    kind = part.get("type") if isinstance(part.get("type"), str) else None
    if kind == "text" and "value" in part and "text" not in part:
        return {key if key != "value" else "text": value for key, value in part.items()}, {"value": True}
    if kind not in MEDIA_PARTS:
        return None
    key = next((k for k in _SOURCE_KEYS if isinstance(part.get(k), str) or _url_of(part.get(k))), None)
    column = columns.get(kind)
    if key is not None and not isinstance(part[key], str):  # an object naming the file by url, with facts of it
        source, mark = _url_of(part[key]), {"key": key, "object": part[key]}
    elif key is not None:
        source, mark = part[key], {"key": key}
    elif column:  # the column's next file: the part stands for it
        entry = column.pop(0)
        source = entry.get("path") if isinstance(entry, dict) else entry
        mark = {"column": True}
        if not isinstance(source, str):
            reading.error(path, f"the {kind} this part stands for, the next of the row's `{MEDIA_PARTS[kind]}`, "
                          "is not a file name or URL", code="wrong-type")
            return {"type": "text", "text": ""}, {}
    else:
        reading.error(path, f"a {kind} part that names no file, in a row with no `{MEDIA_PARTS[kind]}` left for it",
                      f"name the file in the part ({{\"type\": \"{kind}\", \"{kind}\": ...}}) or list it in the row's "
                      f"`{MEDIA_PARTS[kind]}`", code="missing-key")
        return {"type": "text", "text": ""}, {}
    own = {k: v for k, v in part.items() if k != key}
    if kind == "image":
        model = {"type": "image", "image": source}
    else:
        guessed = mimetypes.guess_type(source)[0]
        model = {"type": "file", "data": source,
                 "mediaType": guessed if guessed and guessed.startswith(kind + "/") else f"{kind}/*"}
    mark["part"] = own
    mark["at"] = list(part).index(key) if key is not None else None
    return {"type": "text", "text": ""}, {"model": model, **mark}


def _url_of(value: Any) -> str | None:
    """The url of a media object (`{"url": ..., ...}`, as xtuner writes a video with its facts)."""
    return value["url"] if isinstance(value, dict) and isinstance(value.get("url"), str) else None


def _mark(message: dict, marks: dict, reading: Reading) -> None:
    """The read message with the marks of what was put in OpenAI's form (and media parts replaced
    by their model parts)."""
    content = message["content"]
    if "result" in marks:
        reading.keep(content[0], marks["result"])
    if marks.get("calls"):
        calls = [part for part in content if part["type"] == "tool-call"]
        for number, mark in marks["calls"].items():
            reading.keep(calls[number], mark)
    for number, mark in (marks.get("parts") or {}).items():
        if "model" in mark:
            content[number] = reading.keep(mark["model"], {k: v for k, v in mark.items() if k != "model"})
        else:
            reading.keep(content[number], mark)


def _own_fields(message: dict, reading: Reading) -> None:
    """A message's fields that no Chat Completions message has (`loss`, `reasoning_content`, a tool
    message's `name`) kept under hf-messages (`fields`) rather than where openai-chat keeps a
    message's own: a row exported to openai-chat is then a body the API takes, and one exported
    to hf-messages has them back."""
    holder = message["content"][0] if message["role"] == "tool" else message
    own = kept(holder, OPENAI)
    marks, allowed = (PART_MARKS, ()) if message["role"] == "tool" else (
        MESSAGE_MARKS, API_MESSAGE_FIELDS if message["role"] == "assistant" else ("name",))
    moved = {key: value for key, value in own.items() if key not in marks and key not in allowed}
    if moved:
        for key in moved:
            del own[key]
        if not own:
            del holder["providerOptions"][OPENAI]
        reading.keep(holder, {"fields": moved})


def _keep_order(message: dict, source: dict, index: int, reading: Reading) -> None:
    """Mark the source's key order on the message when writing it would give another."""
    if len(source) < 3 and next(iter(source), "role") == "role":
        return  # {role, content}: as written
    entries = written_message(message, index, [])
    if len(entries) == 1 and list(undone(entries[0], message)) != list(source):
        reading.keep(message["content"][0] if message["role"] == "tool" else message, {"keys": list(source)})
