"""The content parts of an OpenAI user message read into model-message parts (openai_chat.py
reads the messages): text, image_url, input_audio (a file part) and file. The inner object's own
fields (`detail`, `format`, ...) are kept apart from the part's, under its name, so that export
puts each back where it was.
"""

from __future__ import annotations

from typing import Any

from ...providers.rules import is_url
from ..reading import Reading, part_named, rest_of, string_value

AUDIO_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}


def user_parts(content: Any, reading: Reading, path: tuple) -> list[dict] | None:
    if not isinstance(content, list):
        reading.error(path + ("content",), "user content must be a string or a list of parts", code="wrong-type")
        return None
    parts = []
    for index, part in enumerate(content):
        converted = _user_part(part, reading, path + ("content", index))
        if converted is None:
            return None
        parts.append(converted)
    return parts


def _user_part(part: Any, reading: Reading, path: tuple) -> dict | None:
    kind = part.get("type") if isinstance(part, dict) else None
    try:
        if kind == "text":
            return reading.keep({"type": "text", "text": string_value(part["text"])}, {}, rest_of(part, ("type", "text")))
        if kind == "image_url":
            image = part["image_url"]
            url = string_value(image["url"])
            # A url that is neither a web nor a data URL (a dataset's relative path) is written back as
            # it is, not taken for base64 data.
            return reading.keep({"type": "image", "image": url},
                                {"image_url": rest_of(image, ("url",)) or None, "notUrl": True if not is_url(url) else None},
                                rest_of(part, ("type", "image_url")))
        if kind == "input_audio":
            audio = part["input_audio"]
            audio_format = string_value(audio["format"])
            media_type = AUDIO_TYPES.get(audio_format, f"audio/{audio_format}")
            return reading.keep({"type": "file", "data": string_value(audio["data"]), "mediaType": media_type},
                                {"type": "input_audio", "input_audio": rest_of(audio, ("data",))},
                                rest_of(part, ("type", "input_audio")))
        if kind == "file":
            return _file_part(part, reading)
    except (KeyError, TypeError):
        pass
    if kind == "text" and isinstance(part, dict) and "value" in part and "text" not in part:
        reading.error(path, "a text part with `value` instead of `text`: LLaMA-Factory's spelling, not OpenAI's",
                      "import the file as a Hugging Face dataset (--from hf-messages), which reads it", code="wrong-type")
        return None
    reading.error(path, f"{part_named(kind)} chatconv cannot read",
                  "user parts are text, image_url (with url), input_audio (data, format) and file "
                  "(file_data or file_id), as OpenAI's API has them", code="wrong-type")
    return None


def _file_part(part: dict, reading: Reading) -> dict:
    file = part["file"]
    source = "file_data" if "file_data" in file else "file_id"
    data = string_value(file[source])
    media_type = data[5:].split(";")[0].split(",")[0] if data.startswith("data:") else "application/octet-stream"
    converted = {"type": "file", "data": data, "mediaType": media_type or "application/octet-stream"}
    known: tuple = (source,)
    if isinstance(file.get("filename"), str):
        converted["filename"], known = file["filename"], (source, "filename")
    # The file object's other fields (a file_id beside file_data, ...) apart from the part's own.
    return reading.keep(converted, {"fileId": True if source == "file_id" else None,
                                    "file": rest_of(file, known) or None}, rest_of(part, ("type", "file")))


