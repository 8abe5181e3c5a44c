"""Provider request -> the messages a chat API receives (SPEC §3), and agent providers' prompt."""

from __future__ import annotations

from typing import Any

from ..prompt.convert import DEFAULT_SYSTEM_PROMPT, GUIDELINES_HEADER


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
