"""Each provider's stream events assembled into the response the API returns unstreamed: OpenAI
chat chunks into a chat.completion, Responses events into the response, Anthropic's Messages
events into a message, Gemini chunks into a generateContent response, the AI SDK's UI message
chunks into the UIMessage useChat makes of them. An assembler notes in
`notes` what the response lacks for having been cut short.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from .ui_messages import ui_message


# --- OpenAI chat: chunks -> a chat.completion ----------------------------------------------------


def _openai_chat(chunks: list[dict], notes: list[str]) -> dict:
    response: dict[str, Any] = {}
    choices: dict[int, dict] = {}
    for chunk in chunks:
        for key, value in chunk.items():
            if key in ("choices", "obfuscation"):  # obfuscation: padding of each chunk, no part of the answer
                continue
            response[key] = "chat.completion" if key == "object" else value
        for delta_choice in chunk.get("choices") or []:
            index = delta_choice.get("index", 0)
            choice = choices.setdefault(index, {"index": index, "message": {"role": "assistant", "content": None}})
            for key, value in delta_choice.items():
                if key not in ("index", "delta") and (value is not None or key not in choice):
                    choice[key] = _joined(choice.get(key), value)  # logprobs: each chunk's tokens, in order
            _add_chat_delta(choice["message"], delta_choice.get("delta") or {})
    response["choices"] = [choices[index] for index in sorted(choices)]
    for choice in response["choices"]:
        calls = choice["message"].get("tool_calls")
        if calls is not None:
            choice["message"]["tool_calls"] = [calls[index] for index in sorted(calls)]
    return response


def _add_chat_delta(message: dict, delta: dict) -> None:
    for key, value in delta.items():
        if key in ("content", "refusal", "reasoning_content", "reasoning") and isinstance(value, str):
            message[key] = (message.get(key) or "") + value
        elif key in ("content", "refusal") and value is None:
            message.setdefault(key, None)  # as the unstreamed message has it: null
        elif key == "tool_calls" and isinstance(value, list):
            calls = message.setdefault("tool_calls", {})
            for piece in value:
                call = calls.setdefault(piece.get("index", len(calls)),
                                        {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                for field, part in piece.items():
                    if field == "function" and isinstance(part, dict):
                        call["function"]["arguments"] += part.get("arguments") or ""
                        # The name comes whole in the call's first delta; some servers (OpenRouter)
                        # say it again in a later one: the same name, not a piece of it.
                        name = part.get("name") or ""
                        if name != call["function"]["name"]:
                            call["function"]["name"] += name
                    elif field != "index" and part is not None:
                        call[field] = part
        elif key != "role" and value is not None:
            message[key] = _joined(message.get(key), value)  # audio: its data and transcript come in pieces


# Fields that come in pieces: a stream's chunks each carry the next part of them.
_PIECES = frozenset({"data", "transcript", "content", "refusal", "citationSources", "citations"})


def _joined(before: Any, piece: Any) -> Any:
    """A field of a stream's chunks as the whole response has it: objects merged key by key, the
    lists of their pieces (logprobs' tokens, citation sources) joined, the strings of an audio
    answer (data, transcript) joined; anything else is the last chunk's."""
    if isinstance(before, dict) and isinstance(piece, dict):
        merged = dict(before)
        for key, value in piece.items():
            if key in merged and isinstance(value, (list, str)) and type(merged[key]) is type(value) and key in _PIECES:
                merged[key] = merged[key] + value
            else:
                merged[key] = _joined(merged.get(key), value)
        return merged
    return piece


# --- Responses: events -> the response ----------------------------------------------------------


def _openai_responses(events: list[dict], notes: list[str]) -> dict:
    done = [e["response"] for e in events if e.get("type") in ("response.completed", "response.incomplete",
                                                                  "response.failed") and isinstance(e.get("response"), dict)]
    if done:
        return done[-1]  # the whole response, as the API gives it at the end of the stream
    # No end (cut short, or an error): the items as far as they came, from their added and done
    # events, their text and arguments from the deltas.
    started = next((e["response"] for e in events if isinstance(e.get("response"), dict)), {})
    items: dict[int, dict] = {}
    for event in events:
        kind, index = event.get("type"), event.get("output_index", 0)
        if kind in ("response.output_item.added", "response.output_item.done") and isinstance(event.get("item"), dict):
            items[index] = copy.deepcopy(event["item"])
        elif kind == "response.content_part.added" and isinstance(event.get("part"), dict) and index in items:
            items[index].setdefault("content", []).append(copy.deepcopy(event["part"]))
        elif kind == "response.output_text.delta" and index in items and items[index].get("content"):
            part = items[index]["content"][event.get("content_index", -1)]
            part["text"] = part.get("text", "") + event.get("delta", "")
        elif kind == "response.function_call_arguments.delta" and index in items:
            items[index]["arguments"] = items[index].get("arguments", "") + event.get("delta", "")
    return {**started, "object": "response", "output": [items[index] for index in sorted(items)]}


# --- Anthropic: Messages events -> a message ----------------------------------------------------


def _anthropic(events: list[dict], notes: list[str]) -> dict:
    message: dict[str, Any] = {"type": "message", "role": "assistant", "content": []}
    blocks: dict[int, dict] = {}
    json_text: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message = {**copy.deepcopy(event["message"]), "content": []}
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            index = event.get("index", len(blocks))
            blocks[index] = {**copy.deepcopy(event["content_block"]), **blocks.get(index, {})}  # an early delta kept
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            block, delta = blocks.setdefault(event.get("index", 0), {}), event["delta"]
            if delta.get("type") == "input_json_delta":
                json_text[event.get("index", 0)] = json_text.get(event.get("index", 0), "") + delta.get("partial_json", "")
            elif delta.get("type") == "citations_delta":
                block.setdefault("citations", []).append(delta.get("citation"))
            else:
                for field in ("text", "thinking", "signature"):
                    if isinstance(delta.get(field), str):
                        block[field] = (block.get(field) or "") + delta[field]
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
            if isinstance(event.get("usage"), dict):
                message["usage"] = {**(message.get("usage") or {}), **event["usage"]}
    for index, text in json_text.items():
        try:
            blocks[index]["input"] = orjson.loads(text) if text.strip() else {}
        except orjson.JSONDecodeError:  # cut short in the middle of a call's input: kept as it came
            blocks[index]["input"] = text
            notes.append(f"the input of tool call {blocks[index].get('id')!r} is cut short: kept as the text that came")
    message["content"] = [blocks[index] for index in sorted(blocks)]
    return message


# --- Gemini: chunks -> a response ---------------------------------------------------------------


def _gemini(chunks: list[dict], notes: list[str]) -> dict:
    response: dict[str, Any] = {}
    candidates: dict[int, dict] = {}
    for chunk in chunks:
        for key, value in chunk.items():
            if key != "candidates":
                response[key] = value
        for position, piece in enumerate(chunk.get("candidates") or []):
            index = piece.get("index", position)
            candidate = candidates.setdefault(index, {})
            for key, value in piece.items():
                if key == "content" and isinstance(value, dict):
                    content = candidate.setdefault("content", {})
                    for field, part in value.items():
                        if field != "parts":
                            content[field] = part
                    _add_gemini_parts(content.setdefault("parts", []), value.get("parts") or [])
                else:
                    candidate[key] = _joined(candidate.get(key), value)  # citations of each chunk, in order
    if candidates:
        response = {"candidates": [candidates[index] for index in sorted(candidates)], **response}
    return response


def _add_gemini_parts(parts: list[dict], pieces: list) -> None:
    """Text pieces join the text part before them (thought text to thought text); anything else
    (a function call, a signature's own part) is a part of its own."""
    for piece in pieces:
        last = parts[-1] if parts else None
        joins = (isinstance(piece, dict) and isinstance(last, dict) and set(piece) - {"thoughtSignature"} in (
            {"text"}, {"text", "thought"}) and set(last) - {"thoughtSignature"} == set(piece) - {"thoughtSignature"}
            and last.get("thought") == piece.get("thought") and "thoughtSignature" not in last)
        if joins:
            last["text"] += piece["text"]
            if "thoughtSignature" in piece:
                last["thoughtSignature"] = piece["thoughtSignature"]
        else:
            parts.append(copy.deepcopy(piece))


ASSEMBLERS = {"openai-chat": _openai_chat, "openai-responses": _openai_responses, "anthropic": _anthropic,
              "gemini": _gemini, "ai-sdk-ui": ui_message}
