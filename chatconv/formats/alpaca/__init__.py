"""Alpaca rows, as Stanford Alpaca and LLaMA-Factory keep instruction data:
`{"instruction": TEXT, "input": TEXT, "output": TEXT, "system"?: TEXT, "history"?: [[QUERY, ANSWER], ...]}`.

A row is one conversation: the system text, the history's turns, then the user's turn (the
instruction, and the input as a second text part when there is one: `text` and `dataset` join
them with a newline, as LLaMA-Factory builds the prompt) answered by the output. A row without
`input` or with an empty `history` is marked on its user message, so that export writes the row
back as it was (a row without `output`, a prompt to complete, has no answer); the row's other
columns are the conversation's metadata.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..reading import Imported, Reading, kept, rest_of, string_value

NAME = "alpaca"
TARGET = None  # no API's rules: a dataset's rows
KEYS = frozenset({"instruction"})
_COLUMNS = ("instruction", "input", "output", "system", "history")


def detect(data: Any) -> bool:
    """A row with a text `instruction`, and an `output` or `input` beside it."""
    return (isinstance(data, dict) and isinstance(data.get("instruction"), str)
            and ("output" in data or "input" in data))


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    messages, paths = [], []
    if "system" in data:
        messages.append({"role": "system", "content": string_value(data["system"])})
        paths.append(("system",))
    history = data.get("history", [])
    if not isinstance(history, list) or not all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(t, str) for t in pair) for pair in history):
        reading.error(("history",), "history is a list of [query, answer] pairs of text", code="wrong-type")
        return
    for index, (query, answer) in enumerate(history):
        messages += [reading.keep({"role": "user", "content": query}, {"history": True}),
                     reading.keep({"role": "assistant", "content": answer}, {"history": True})]
        paths += [("history", index, 0), ("history", index, 1)]
    parts = [{"type": "text", "text": data["instruction"]}]
    given = data.get("input")
    if given is not None and not isinstance(given, str):
        reading.error(("input",), "input is text", code="wrong-type")
        return
    if given:
        parts.append({"type": "text", "text": given})
    marks = {"noInput": True if "input" not in data else None, "history": True if "history" in data else None}
    messages.append(reading.keep({"role": "user", "content": parts}, marks))
    paths.append(("instruction",))
    if "output" in data:
        messages.append({"role": "assistant", "content": string_value(data["output"])})
        paths.append(("output",))
    yield Imported(None, messages, rest_of(data, _COLUMNS), paths)


def write(messages: list[dict], metadata: dict, gather_tools: bool = False, notes: list | None = None) -> dict:
    """An Alpaca row of a conversation: its last user turn the instruction (and input), the answer
    after it the output, the turns before it the history. What a row cannot hold (tool calls,
    images, reasoning, a second system text) is left out, noted in `notes` as (index, code, what)."""
    notes = notes if notes is not None else []
    texts = [(index, message, _texts(message, index, notes)) for index, message in enumerate(messages)]
    row: dict[str, Any] = {}
    asked = max((i for i, (_, m, _) in enumerate(texts) if m["role"] == "user"), default=None)
    if asked is None:
        notes.append((None, "part-left-out", "a conversation with no user turn has no instruction: the row is empty"))
        return {**row, **metadata}
    index, question, parts = texts[asked]
    own = kept(question, NAME)
    row["instruction"] = parts[0] if parts else ""
    if len(parts) > 1:
        row["input"] = "\n".join(parts[1:])
    elif not own.get("noInput"):
        row["input"] = ""
    answers = [t for _, m, tx in texts[asked + 1:] if m["role"] == "assistant" for t in tx]
    if answers or asked + 1 < len(texts):
        row["output"] = "\n".join(answers)
    systems = [tx for _, m, tx in texts[:asked] if m["role"] == "system"]
    if systems:
        row["system"] = "\n".join(t for tx in systems for t in tx)
    earlier = [(m["role"], "\n".join(tx)) for _, m, tx in texts[:asked] if m["role"] in ("user", "assistant")]
    pairs = [[q, a] for (qr, q), (ar, a) in zip(earlier[::2], earlier[1::2]) if qr == "user" and ar == "assistant"]
    if pairs or own.get("history"):
        row["history"] = pairs
    if len(pairs) * 2 != len(earlier):
        notes.append((None, "part-left-out", "earlier turns that are not user/assistant pairs are left out of the "
                      "history"))
    return {**row, **metadata}


def _texts(message: dict, index: int, notes: list) -> list[str]:
    """A message's texts; what is not text is left out, noted."""
    content = message["content"]
    if isinstance(content, str):
        return [content]
    texts = []
    for part in content:
        if part["type"] == "text":
            texts.append(part["text"])
        else:
            notes.append((index, "part-left-out", f"a {part['type']} part is left out (an Alpaca row holds text)"))
    return texts
