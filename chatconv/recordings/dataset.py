"""What is made of a recording's steps: their text, and dataset items (SPEC §5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..messages import extract_text_from_message, normalize_output
from ..sources import without_compression
from .steps import Step


def step_text(step: dict) -> str:
    """The text of a step's whole output array: extract_text_from_messages(normalize_output(
    output)), written out in one loop, since `text` and `dataset` ask it of every step."""
    output = step["output"]
    messages = output if isinstance(output, list) else normalize_output(output)
    texts = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join([part["text"] for part in content if isinstance(part, dict)
                                 and part.get("type") == "text" and isinstance(part.get("text"), str)])
        if content and isinstance(content, str):
            texts.append(content)
    return "\n\n".join(texts)


def dataset_item(item: Step) -> dict:
    """The dataset item of a step read from a file. A step without a conversationId is taken as
    a step of the file's own conversation: the file's name without its suffix, and without a
    compression suffix (run.jsonl.gz is run; "stdin" for standard input), stands for the
    conversation id."""
    conversation_id = item.conversation_id
    if conversation_id is None:
        conversation_id = "stdin" if item.record.file == "-" else Path(without_compression(item.record.file)).stem
    return step_to_dataset_item(conversation_id, item.step)


def step_to_dataset_item(conversation_id: Any, step: dict) -> dict:
    """{id: "<conversation id>-step-<i>", prompt, completion, metadata} (SPEC §5)."""
    return {"id": f"{conversation_id}-step-{step['stepIndex']}",
            "prompt": extract_text_from_message(step["input"]),
            "completion": step_text(step),
            "metadata": step.get("metadata", {})}


def conversation_to_dataset(conversation: dict) -> list[dict]:
    """A conversation record's dataset items, one per step (step_to_dataset_item)."""
    return [step_to_dataset_item(conversation["id"], step) for step in conversation["steps"]]
