"""Provider request -> API messages -> OpenAI / Anthropic / Gemini request bodies (SPEC §3).

`build_chat_prompt` (request.py) decides which messages a chat API receives. The renderers
(openai.py, anthropic.py, gemini.py) turn messages (a ChatPrompt, or AI SDK model messages with
parts) into each API's body, without model and sampling settings, and enforce that API's rules
(rules.py): a broken rule is a ProviderRuleError naming the message, unless `repair=True`.
"""

from __future__ import annotations

from ..prompt.convert import DEFAULT_SYSTEM_PROMPT
from .anthropic import render_anthropic
from .gemini import render_gemini
from .openai import render_openai
from .request import agent_prompt, build_chat_prompt
from .rules import ProviderRuleError, Rendering

TARGETS = ("raw", "openai", "anthropic", "gemini", "agent")
RENDERERS = {"openai": render_openai, "anthropic": render_anthropic, "gemini": render_gemini}


def render_request(request: dict, target: str, repair: bool = False,
                   default_system_prompt: str = DEFAULT_SYSTEM_PROMPT,
                   warnings: list | None = None) -> tuple[dict, list[str]]:
    """The request body a target takes for a provider request, and the repairs made; what it
    leaves out is noted in `warnings` as (message index, problem code, what)."""
    if target == "agent":
        return agent_prompt(request), []
    return RENDERERS[target](build_chat_prompt(request, default_system_prompt), repair, warnings)


__all__ = ["RENDERERS", "TARGETS", "ProviderRuleError", "Rendering", "agent_prompt", "build_chat_prompt",
           "render_anthropic", "render_gemini", "render_openai", "render_request"]
