"""The content of OpenAI Responses API message items and tool outputs, as model-message parts.

User parts: input_text, input_image (image_url or file_id), input_file (file_data, file_url or
file_id) and input_audio; assistant parts: output_text (annotations, logprobs kept) and
refusal; a system or developer message's input_text parts, joined. A function_call_output's
`output` is a string (a text output) or a list of content parts: plain input_text parts become a
content output, any other list is kept as it is as a json output.
"""

from __future__ import annotations

import mimetypes
from typing import Any

from ..openai_chat.parts import AUDIO_TYPES
from ..reading import Reading, part_named, rest_of

NAME = "openai-responses"
USER_PARTS = ("input_text", "input_image", "input_file", "input_audio")
ASSISTANT_PARTS = ("output_text", "refusal")
FILE_SOURCES = ("file_data", "file_url", "file_id")


def joined_text(content: Any, reading: Reading, path: tuple) -> str | None:
    """System or developer text written as input_text parts (the API allows it): their text, joined."""
    if isinstance(content, list) and content and all(
            isinstance(p, dict) and p.get("type") == "input_text" and isinstance(p.get("text"), str) for p in content):
        return "\n".join(p["text"] for p in content)
    reading.error(path + ("content",), "system and developer content must be a string or input_text parts",
                  code="wrong-type")
    return None


def user_parts(content: Any, reading: Reading, path: tuple) -> list[dict] | None:
    if not isinstance(content, list):
        reading.error(path + ("content",), "user content must be a string or a list of parts", code="wrong-type")
        return None
    parts = [user_part(part, reading, path + ("content", index)) for index, part in enumerate(content)]
    return None if any(part is None for part in parts) else parts


def user_part(part: Any, reading: Reading, path: tuple) -> dict | None:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "input_text" and isinstance(part.get("text"), str):
        return reading.keep({"type": "text", "text": part["text"]}, {}, rest_of(part, ("type", "text")))
    if kind == "input_image":
        source = "image_url" if isinstance(part.get("image_url"), str) else "file_id"
        if isinstance(part.get(source), str):
            return reading.keep({"type": "image", "image": part[source]},
                                {"fileId": True if source == "file_id" else None}, rest_of(part, ("type", source)))
    if kind == "input_file":
        source = next((key for key in FILE_SOURCES if isinstance(part.get(key), str)), None)
        if source is not None:
            return _file(part, source, reading)
    if kind == "input_audio" and isinstance(part.get("input_audio"), dict) \
            and isinstance(part["input_audio"].get("data"), str) \
            and isinstance(part["input_audio"].get("format"), (str, type(None))):  # a list is no key of AUDIO_TYPES
        audio = part["input_audio"]
        media_type = AUDIO_TYPES.get(audio.get("format"), f"audio/{audio.get('format')}")
        return reading.keep({"type": "file", "data": audio["data"], "mediaType": media_type},
                            {"type": "input_audio"}, {**rest_of(part, ("type", "input_audio")),
                                                      **rest_of(audio, ("data",))})
    reading.error(path, f"{part_named(kind)} chatconv cannot read in a user message",
                  "user parts are input_text (text), input_image (image_url or file_id), input_file "
                  "(file_data, file_url or file_id) and input_audio (data, format), as OpenAI's API has them",
                  code="wrong-type")
    return None


def _file(part: dict, source: str, reading: Reading) -> dict:
    data, filename = part[source], part.get("filename")
    # The media type the data URL names, else the one the file name suggests: a file part needs one.
    if data.startswith("data:"):
        media_type = data[5:].split(";")[0].split(",")[0]
    else:
        media_type = mimetypes.guess_type(filename)[0] if isinstance(filename, str) else None
    converted = {"type": "file", "data": data, "mediaType": media_type or "application/octet-stream"}
    if isinstance(filename, str):
        converted["filename"] = filename
    known = ("type", source, "filename") if isinstance(filename, str) else ("type", source)
    return reading.keep(converted, {"source": source if source != "file_data" else None}, rest_of(part, known))


def assistant_parts(content: Any, reading: Reading, path: tuple) -> list[dict] | None:
    if isinstance(content, str):
        return [reading.keep({"type": "text", "text": content}, {"contentString": True})]
    if not isinstance(content, list) or not content:
        reading.error(path + ("content",), "assistant content must be a string or a non-empty list of parts",
                      code="wrong-type")
        return None
    parts = []
    for index, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "output_text" and isinstance(part.get("text"), str):
            parts.append(reading.keep({"type": "text", "text": part["text"]}, {}, rest_of(part, ("type", "text"))))
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            parts.append(reading.keep({"type": "text", "text": part["refusal"]},
                                      {"refusal": True}, rest_of(part, ("type", "refusal"))))
        else:
            reading.error(path + ("content", index), f"{part_named(kind)} chatconv cannot read in an "
                          "assistant message", "assistant parts are output_text (text) and refusal (refusal)",
                          code="wrong-type")
            return None
    return parts


def tool_output(output: Any, reading: Reading, path: tuple) -> dict | None:
    """A function_call_output's output as a tool-result output."""
    if isinstance(output, str):
        return {"type": "text", "value": output}
    if isinstance(output, list) and all(isinstance(p, dict) and p.get("type") in USER_PARTS for p in output):
        if all(p["type"] == "input_text" and isinstance(p.get("text"), str) and set(p) == {"type", "text"}
               for p in output):
            return {"type": "content", "value": [{"type": "text", "text": p["text"]} for p in output]}
        return {"type": "json", "value": output}  # images, files: the parts as they are
    reading.error(path + ("output",), "a tool output must be a string or a list of input_text, input_image "
                  "and input_file parts", code="wrong-type")
    return None
