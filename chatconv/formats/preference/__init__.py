"""Preference pairs, as DPO and ORPO training takes them: TRL's `{"prompt", "chosen", "rejected"}`
(each text or a list of messages; without `prompt`, chosen and rejected are whole conversations)
and OpenAI's preference fine-tuning lines `{"input": {"messages", ...}, "preferred_output": [...],
"non_preferred_output": [...]}`.

A pair is one conversation: the prompt, answered by the chosen side. The rejected side is read
too (a pair chatconv cannot read is refused whole) and kept as written in the conversation's
metadata, with the row's other columns, so that export writes the pair back: import then export
gives the same JSON value, key order too. Messages are read as hf-messages reads them (the
Hub's liberties and OpenAI's form alike); the form of the pair and of each side is marked on the
first message (`form`, `prompt`/`chosen`/`rejected`: "text" for a side written as text, "none"
for an implicit prompt), the chosen side's first message `side: "chosen"`.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..sharegpt import NAME as SHAREGPT, ROLES as SHAREGPT_ROLES, TAGS, read as read_sharegpt, write as write_sharegpt
from ..hf_messages import read_lists, written_lists
from ..reading import STARTS_A_STEP, Imported, Reading, kept, rest_of

NAME = "preference"
TARGET = None  # no API's rules: a dataset's rows
KEYS = frozenset({"chosen", "preferred_output"})
# Each form's columns: the prompt, the chosen side, the rejected side.
FORMS = {"trl": ("prompt", "chosen", "rejected"), "openai": ("input", "preferred_output", "non_preferred_output")}


def detect(data: Any) -> bool:
    """A TRL pair (text or message lists) or an OpenAI preference line."""
    if not isinstance(data, dict) or "instruction" in data:  # (LLaMA-Factory's Alpaca pairs: alpaca keeps them)
        return False
    if "chosen" in data and "rejected" in data:
        if isinstance(data.get("conversations"), list):  # LLaMA-Factory's: ShareGPT turns, the sides a turn each
            return _is_turn(data["chosen"]) and _is_turn(data["rejected"])
        return _is_side(data["chosen"]) and _is_side(data["rejected"]) and _is_side(data.get("prompt", ""))
    given = data.get("input")
    return (isinstance(given, dict) and _is_messages(given.get("messages")) and "non_preferred_output" in data
            and _is_messages(data.get("preferred_output")))


def _is_turn(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("from"), str) and isinstance(value.get("value"), str)


def _is_side(value: Any) -> bool:
    return isinstance(value, str) or _is_messages(value)


def _is_messages(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    if isinstance(data.get("conversations"), list):
        yield from _sharegpt_pair(data, reading)
        return
    form = "openai" if isinstance(data.get("input"), dict) and "preferred_output" in data else "trl"
    prompt_key, chosen_key, rejected_key = FORMS[form]
    marks: dict[str, Any] = {"form": form if form != "trl" else None}
    if form == "openai":
        prompt_at, prompt = ("input", "messages"), data["input"].get("messages")
    else:
        prompt_at, prompt = (prompt_key,), data.get(prompt_key)
    sides = []
    for key, where, value, role in ((prompt_key, prompt_at, prompt, "user"), (chosen_key, (chosen_key,),
                                    data.get(chosen_key), "assistant"), (rejected_key, (rejected_key,),
                                                                         data.get(rejected_key), "assistant")):
        if isinstance(value, str) and form == "trl":
            value, marks[key] = [{"role": role, "content": value}], "text"
        elif value is None and key == prompt_key and form == "trl":
            value, marks[key] = [], "none"  # the implicit prompt: each side is a whole conversation
        elif not isinstance(value, list):
            reading.error(where, f"`{'.'.join(where)}` of a preference pair is "
                          f"{'text or ' if form == 'trl' else ''}a list of messages", code="wrong-type")
            return
        sides.append((where, value))
    if read_lists([sides[2]], data, reading) is None:  # the rejected side, checked; kept as written
        return
    read_now = read_lists(sides[:2], data, reading)
    if read_now is None:
        return
    messages, paths = read_now
    if not messages:
        reading.error((), "a preference pair with no message", code="wrong-type")
        return
    if len(messages) > len(sides[0][1]):
        reading.keep(messages[len(sides[0][1])], {"side": "chosen"})
    metadata = {key: value for key, value in data.items() if key not in (prompt_key, chosen_key)}
    if form == "openai":
        metadata = {prompt_key: {k: v for k, v in data[prompt_key].items() if k != "messages"}, **metadata}
    if list(_in_order(metadata, form, marks)) != list(data):
        marks["keys"] = list(data)
    reading.keep(messages[0], marks)
    yield Imported(None, messages, metadata, paths)


def _sharegpt_pair(data: dict, reading: Reading) -> Iterator[Imported]:
    """LLaMA-Factory's pair: the prompt as ShareGPT turns (read by sharegpt, its marks its own),
    the chosen side a turn of the model's; the rejected one checked and kept as written."""
    for key in ("chosen", "rejected"):
        if not _is_turn(data.get(key)) or SHAREGPT_ROLES.get(data[key]["from"]) != "assistant":
            reading.error((key,), f"`{key}` of a ShareGPT pair is a turn of the model's ({{\"from\": \"gpt\", "
                          "\"value\": TEXT}})", code="wrong-type")
            return
    inner = Reading(reading.record, SHAREGPT, reading.problems)
    prompt = next(iter(read_sharegpt(inner)), None)
    if prompt is None or reading.failed:
        return
    turn = data["chosen"]
    chosen = reading.keep({"role": "assistant", "content": turn["value"]},
                          {"side": "chosen", "from": turn["from"] if turn["from"] != TAGS["assistant"] else None},
                          rest_of(turn, ("from", "value")))
    reading.keep(prompt.messages[0], {"form": "sharegpt", "keys": list(data)})
    metadata = {key: value for key, value in prompt.metadata.items() if key != "chosen"}
    yield Imported(None, [*prompt.messages, chosen], metadata, [*prompt.paths, ("chosen",)])


def _in_order(metadata: dict, form: str, marks: dict) -> dict:
    """A row's columns in the order export writes them: prompt, chosen, then the others."""
    prompt_key, chosen_key, _ = FORMS[form]
    head = [prompt_key] if marks.get(prompt_key) != "none" else []
    return {**dict.fromkeys(head + [chosen_key]), **metadata}


def write(messages: list[dict], metadata: dict, gather_tools: bool = False, notes: list | None = None) -> dict:
    """The pair: the prompt and the chosen side from the messages (the chosen side from the first
    message marked so, else the answer after the last user or system message), in the form read;
    the rejected side and the other columns from the metadata."""
    notes = notes if notes is not None else []
    marks = kept(messages[0], NAME) if messages else {}
    if marks.get("form") == "sharegpt":
        return _sharegpt_row(messages, metadata, marks, notes)
    form = marks.get("form", "trl") if marks.get("form") in FORMS else "trl"
    prompt_key, chosen_key, rejected_key = FORMS[form]
    entries, starts = written_lists(messages, notes)
    first = next((i for i, m in enumerate(messages) if kept(m, NAME).get("side") == "chosen"), None)
    if first is None:
        last_asked = max((i for i, m in enumerate(messages) if m["role"] in STARTS_A_STEP), default=-1)
        first = last_asked + 1
    split = starts[first] if first < len(starts) else len(entries)
    prompt, chosen = _side(entries[:split], marks.get(prompt_key)), _side(entries[split:], marks.get(chosen_key))
    if rejected_key not in metadata:
        notes.append((None, "part-left-out", f"no rejected side was recorded: the pair has no `{rejected_key}`"))
    row = dict(metadata)
    if form == "openai":
        given = metadata.get(prompt_key) if isinstance(metadata.get(prompt_key), dict) else {}
        row[prompt_key] = {"messages": prompt, **given}
    elif marks.get(prompt_key) != "none":
        row[prompt_key] = prompt
    row[chosen_key] = chosen
    row = {**{key: row[key] for key in _in_order(metadata, form, marks) if key in row}, **row}
    keys = marks.get("keys")
    return {**{key: row[key] for key in keys if key in row}, **row} if isinstance(keys, list) else row


def _side(entries: list[dict], mark: Any) -> Any:
    """A side as written: its text, when it was read from text and is still one plain message."""
    if mark == "text" and len(entries) == 1 and set(entries[0]) == {"role", "content"} \
            and isinstance(entries[0]["content"], str):
        return entries[0]["content"]
    return entries


def _sharegpt_row(messages: list[dict], metadata: dict, marks: dict, notes: list) -> dict:
    """LLaMA-Factory's pair: the turns before the chosen side as sharegpt writes them, the chosen
    side a turn, the rest from the metadata, in the order read."""
    first = next((i for i, m in enumerate(messages) if kept(m, NAME).get("side") == "chosen"), len(messages) - 1)
    row = write_sharegpt(messages[:first], {}, notes=notes)
    answer = messages[first] if first < len(messages) else {"role": "assistant", "content": ""}
    own = kept(answer, NAME)
    text = answer["content"] if isinstance(answer["content"], str) else "\n".join(
        p["text"] for p in answer["content"] if p["type"] == "text")
    row["chosen"] = {"from": own.get("from", TAGS["assistant"]), "value": text,
                     **{k: v for k, v in own.items() if k not in ("side", "from")}}
    row.update(metadata)
    keys = marks.get("keys")
    return {**{key: row[key] for key in keys if key in row}, **row} if isinstance(keys, list) else row
