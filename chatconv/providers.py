"""Provider request -> API messages -> OpenAI / Anthropic / Gemini request bodies (SPEC §3).

`build_chat_prompt` decides which messages a chat API receives. The renderers turn messages
(a ChatPrompt, or AI SDK model messages with parts) into each API's body, without model and
sampling settings, and enforce that API's rules: a broken rule is a ProviderRuleError naming
the message, unless `repair=True`, in which case the fix is made and reported. Merging runs of
one role for Anthropic and Gemini is how those APIs take a conversation, not a repair.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import orjson

from .problems import ChatconvError, Problem
from .prompt.convert import DEFAULT_SYSTEM_PROMPT, GUIDELINES_HEADER

TARGETS = ("raw", "openai", "anthropic", "gemini", "agent")


class ProviderRuleError(ChatconvError):
    """A message list that the target API would refuse."""

    def __init__(self, target: str, index: int | None, message: str, hint: str):
        path = "$" if index is None else f"$.messages[{index}]"
        super().__init__(Problem("<request>", None, None, path, f"{target}: {message}", "error", hint))
        self.target, self.index, self.rule = target, index, message


def _guidelines_text(guidelines: Any) -> str:
    return "\n\n".join(guidelines) if isinstance(guidelines, list) else (guidelines or "")


def build_chat_prompt(request: dict, default_system_prompt: str = DEFAULT_SYSTEM_PROMPT) -> list[dict]:
    """The messages a chat API receives for a provider request.

    A chatPrompt is sent as it is when it has a system message, else with the request's system
    prompt (or the default) before it; `guidelines` is then ignored, being already merged. With
    no chatPrompt, the question becomes one user message after system prompt + guidelines.
    """
    system = request.get("systemPrompt") or default_system_prompt
    chat_prompt = request.get("chatPrompt")
    if chat_prompt is not None:
        if any(m["role"] == "system" for m in chat_prompt):
            return list(chat_prompt)
        return [{"role": "system", "content": system}, *chat_prompt]
    guidelines = _guidelines_text(request.get("guidelines"))
    if guidelines:
        system = f"{system}\n\n{GUIDELINES_HEADER}\n\n{guidelines}"
    return [{"role": "system", "content": system}, {"role": "user", "content": request["question"]}]


def agent_prompt(request: dict) -> dict:
    """Agent providers (VS Code, Codex) read the transcript text, role markers and all."""
    return {"prompt": request["question"]}


# ---------------------------------------------------------------------------------------------
# Shared helpers


@dataclass
class Rendering:
    target: str
    repair: bool
    repairs: list[str] = field(default_factory=list)

    def broken(self, index: int | None, message: str, hint: str, fix: Callable[[], None] | None = None) -> None:
        """Raise for a broken rule, or, when repairs are allowed and one exists, make and note it."""
        if self.repair and fix is not None:
            fix()
            self.repairs.append(f"{self.target}: message {index}: {message} (repaired)")
            return
        raise ProviderRuleError(self.target, index, message, hint)


def _parts(message: dict) -> list[dict]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _result_text(output: dict) -> str:
    """A tool result's output as text, for APIs that take results as strings."""
    kind, value = output.get("type"), output.get("value")
    if kind in ("text", "error-text"):
        return value
    if kind == "content":
        return "\n".join(item.get("text", "") for item in value if item.get("type") == "text")
    return orjson.dumps(value).decode()


def _is_error(output: dict) -> bool:
    return str(output.get("type", "")).startswith("error-")


def _is_url(data: str) -> bool:
    return data.startswith(("http://", "https://", "data:"))


def _tool_text_message(message: dict) -> dict | None:
    """A tool message that holds only text (as in eval input) has no place of its own in an API."""
    if message["role"] == "tool" and isinstance(message["content"], str):
        return {"role": "user", "content": f"[Tool]: {message['content']}"}
    return None


def _hoist_system(messages: list[dict], state: Rendering) -> tuple[str, list[dict]]:
    """Anthropic and Gemini take one system text before the conversation."""
    system, rest = [], []
    for index, message in enumerate(messages):
        if message["role"] != "system":
            rest.append(message)
        elif not rest:
            system.append(message["content"])
        else:
            state.broken(index, "a system message after the conversation has started",
                         "use --system-policy merge (or user/assistant) so that system text comes first",
                         lambda m=message: system.append(m["content"]))
    return "\n\n".join(system), rest


def _merged_turns(messages: list[dict], state: Rendering, assistant_role: str,
                  to_block: Callable[[dict, int, Rendering], dict | None]) -> list[dict]:
    """Turns of {"role", "blocks", "index"}: tool results go with the user, runs of one role merge."""
    turns: list[dict] = []
    for index, message in enumerate(messages):
        message = _tool_text_message(message) or message
        role = assistant_role if message["role"] == "assistant" else "user"
        blocks = [b for b in (to_block(p, index, state) for p in _parts(message)) if b is not None]
        if not blocks:
            continue  # nothing of it can be sent (e.g. only reasoning, or repaired empty text)
        if turns and turns[-1]["role"] == role:
            turns[-1]["blocks"].extend(blocks)
        else:
            turns.append({"role": role, "blocks": blocks, "index": index})
    return turns


# ---------------------------------------------------------------------------------------------
# OpenAI / Azure OpenAI chat completions


def render_openai(messages: list[dict], repair: bool = False) -> tuple[dict, list[str]]:
    state = Rendering("openai", repair)
    out: list[dict] = []
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        message = _tool_text_message(message) or message
        role = message["role"]
        if role == "system" or isinstance(message["content"], str):
            out.append({"role": role, "content": message["content"]})
            continue
        if role == "tool":
            for part in message["content"]:
                call_id = part["toolCallId"]
                if call_id not in open_calls:
                    state.broken(index, f"tool result {call_id!r} answers no earlier tool_calls id",
                                 "a tool message must follow the assistant message that made the call",
                                 lambda: None)
                    continue
                open_calls.discard(call_id)
                out.append({"role": "tool", "tool_call_id": call_id, "content": _result_text(part["output"])})
            continue
        if role == "assistant":
            texts = [p["text"] for p in message["content"] if p["type"] == "text"]
            calls = [p for p in message["content"] if p["type"] == "tool-call"]
            entry: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
            if calls:
                entry["tool_calls"] = [{"id": c["toolCallId"], "type": "function", "function": {
                    "name": c["toolName"], "arguments": orjson.dumps(c.get("input", {})).decode()}} for c in calls]
                open_calls.update(c["toolCallId"] for c in calls)
            out.append(entry)
            continue
        out.append({"role": role, "content": [_openai_part(p) for p in message["content"]]})
    return {"messages": out}, state.repairs


def _openai_part(part: dict) -> dict:
    if part["type"] == "text":
        return {"type": "text", "text": part["text"]}
    if part["type"] == "image":
        url = part["image"] if _is_url(part["image"]) else f"data:{part.get('mediaType', 'image/png')};base64,{part['image']}"
        return {"type": "image_url", "image_url": {"url": url}}
    file = {"file_data": part["data"] if _is_url(part["data"]) else f"data:{part['mediaType']};base64,{part['data']}"}
    if part.get("filename"):
        file["filename"] = part["filename"]
    return {"type": "file", "file": file}


# ---------------------------------------------------------------------------------------------
# Anthropic Messages


def render_anthropic(messages: list[dict], repair: bool = False) -> tuple[dict, list[str]]:
    state = Rendering("anthropic", repair)
    system, rest = _hoist_system(messages, state)
    turns = _merged_turns(rest, state, "assistant", _anthropic_block)
    _check_turns(turns, state, "tool_use", "tool_result", "tool_use_id", "id")
    body: dict[str, Any] = {}
    if system:
        body["system"] = system
    body["messages"] = [{"role": t["role"], "content": _anthropic_content(t["blocks"])} for t in turns]
    return body, state.repairs


def _anthropic_content(blocks: list[dict]) -> str | list[dict]:
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return blocks[0]["text"]
    return blocks


def _text_block(part: dict, index: int, state: Rendering, what: str, hint: str) -> dict | None:
    """A text part as a text block; Anthropic and Gemini refuse empty text (a repair drops it)."""
    if not part["text"].strip():
        state.broken(index, what, hint, lambda: None)
        return None
    return {"type": "text", "text": part["text"]}


def _media(part: dict) -> tuple[str, str, bool]:
    """(data or URL, media type, whether it is a URL) of an image or file part."""
    data = part["image"] if part["type"] == "image" else part["data"]
    return data, part.get("mediaType", "image/png"), data.startswith(("http://", "https://"))


def _anthropic_block(part: dict, index: int, state: Rendering) -> dict | None:
    kind = part["type"]
    if kind == "text":
        return _text_block(part, index, state, "an empty text block", "Anthropic refuses empty text; remove it")
    if kind in ("image", "file"):
        data, media_type, is_url = _media(part)
        source = ({"type": "url", "url": data} if is_url else
                  {"type": "base64", "media_type": media_type, "data": data})
        return {"type": "image" if kind == "image" else "document", "source": source}
    if kind == "tool-call":
        return {"type": "tool_use", "id": part["toolCallId"], "name": part["toolName"], "input": part.get("input", {})}
    if kind == "tool-result":
        block = {"type": "tool_result", "tool_use_id": part["toolCallId"], "content": _result_text(part["output"])}
        if _is_error(part["output"]):
            block["is_error"] = True
        return block
    return None  # reasoning: the APIs take no reasoning back without the provider's signature


def _check_turns(turns: list[dict], state: Rendering, call: str, result: str, result_id: str, call_id: str) -> None:
    """Start with the user; every call answered in the next user turn, results first."""
    if not turns:
        state.broken(None, "no message to send besides the system prompt",
                     "the API needs at least one user message; give the case a user message")
    if turns and turns[0]["role"] != "user":
        state.broken(turns[0]["index"], f"the conversation starts with the {turns[0]['role']}",
                     "the first message must come from the user",
                     lambda: turns.insert(0, {"role": "user", "blocks": [{"type": "text", "text": "(conversation start)"}],
                                              "index": 0}))
    for position, turn in enumerate(turns):
        calls = [b[call_id] for b in turn["blocks"] if b.get("type") == call]
        if turn["role"] == "user":
            results = [b for b in turn["blocks"] if b.get("type") == result]
            answered = _answered_ids(turns, position, call, call_id)
            for block in results:
                if block[result_id] not in answered:
                    state.broken(turn["index"], f"a {result} for {block[result_id]!r} answers no {call} of the turn before",
                                 f"each {result} must follow the assistant turn holding its {call}",
                                 lambda b=block, t=turn: _result_to_text(t, b, result_id))
            _results_first(turn, state, result)
        if calls:
            following = turns[position + 1] if position + 1 < len(turns) else None
            given = {b[result_id] for b in following["blocks"] if b.get("type") == result} if following else set()
            for missing in (c for c in calls if c not in given):
                state.broken(turn["index"], f"{call} {missing!r} is not answered in the next user message",
                             f"put a {result} for it first in the next user message",
                             lambda t=turn, m=missing: _drop_call(t, m, call, call_id))


def _answered_ids(turns: list[dict], position: int, call: str, call_id: str) -> set:
    if position == 0 or turns[position - 1]["role"] == "user":
        return set()
    return {b[call_id] for b in turns[position - 1]["blocks"] if b.get("type") == call}


def _results_first(turn: dict, state: Rendering, result: str) -> None:
    blocks = turn["blocks"]
    kinds = [b.get("type") == result for b in blocks]
    if any(kinds) and kinds != sorted(kinds, reverse=True):
        state.broken(turn["index"], f"text comes before a {result} in a user message",
                     "tool results must come first in the user message",
                     lambda: blocks.sort(key=lambda b: b.get("type") != result))


def _result_to_text(turn: dict, block: dict, result_id: str) -> None:
    position = turn["blocks"].index(block)
    turn["blocks"][position] = {"type": "text", "text": f"[Tool result {block[result_id]}]: {block.get('content', '')}"}


def _drop_call(turn: dict, missing: str, call: str, call_id: str) -> None:
    turn["blocks"] = [b for b in turn["blocks"] if not (b.get("type") == call and b[call_id] == missing)]


# ---------------------------------------------------------------------------------------------
# Gemini generateContent


def render_gemini(messages: list[dict], repair: bool = False) -> tuple[dict, list[str]]:
    state = Rendering("gemini", repair)
    system, rest = _hoist_system(messages, state)
    turns = _merged_turns(rest, state, "model", _gemini_part)
    _check_turns(turns, state, "functionCall", "functionResponse", "id", "id")
    body: dict[str, Any] = {}
    if system:
        body["system_instruction"] = {"parts": [{"text": system}]}
    body["contents"] = [{"role": t["role"], "parts": [_gemini_wire(b) for b in t["blocks"]]} for t in turns]
    return body, state.repairs


def _gemini_part(part: dict, index: int, state: Rendering) -> dict | None:
    kind = part["type"]
    if kind == "text":
        return _text_block(part, index, state, "an empty text part", "Gemini refuses empty parts; remove it")
    if kind in ("image", "file"):
        data, media_type, is_url = _media(part)
        if is_url:
            return {"type": "wire", "part": {"file_data": {"mime_type": media_type, "file_uri": data}}}
        return {"type": "wire", "part": {"inline_data": {"mime_type": media_type, "data": data}}}
    if kind == "tool-call":
        return {"type": "functionCall", "id": part["toolCallId"], "name": part["toolName"], "args": part.get("input", {})}
    if kind == "tool-result":
        output = part["output"]
        value = output.get("value")
        response = value if isinstance(value, dict) else {"error" if _is_error(output) else "result": value}
        return {"type": "functionResponse", "id": part["toolCallId"], "name": part["toolName"], "response": response}
    return None


def _gemini_wire(block: dict) -> dict:
    if block["type"] == "text":
        return {"text": block["text"]}
    if block["type"] in ("functionCall", "functionResponse"):
        payload = "args" if block["type"] == "functionCall" else "response"
        return {block["type"]: {"id": block["id"], "name": block["name"], payload: block[payload]}}
    return block["part"]


RENDERERS = {"openai": render_openai, "anthropic": render_anthropic, "gemini": render_gemini}


def render_request(request: dict, target: str, repair: bool = False,
                   default_system_prompt: str = DEFAULT_SYSTEM_PROMPT) -> tuple[dict, list[str]]:
    """The request body a target takes for a provider request, and the repairs made."""
    if target == "agent":
        return agent_prompt(request), []
    return RENDERERS[target](build_chat_prompt(request, default_system_prompt), repair)
