"""Eval case -> segments -> ChatPrompt and question (seeds 000-002).

convert: the conversion itself; load: an eval file's context and the prompts of its cases.
"""

from .convert import (DEFAULT_SYSTEM_PROMPT, GUIDELINES_HEADER, SYSTEM_POLICIES, PromptInputs,
                      PromptOptions, Segment, build_prompt_inputs, build_question,
                      convert_to_chat_prompt, resolve_segments)
from .load import CasePrompt, EvalFileContext, EvalFilePrompts, UnknownCase, build_prompts, config_patterns

__all__ = [
    "DEFAULT_SYSTEM_PROMPT", "GUIDELINES_HEADER", "SYSTEM_POLICIES", "CasePrompt", "EvalFileContext",
    "EvalFilePrompts", "PromptInputs", "PromptOptions", "Segment", "UnknownCase", "build_prompt_inputs",
    "build_prompts", "build_question", "config_patterns", "convert_to_chat_prompt", "resolve_segments",
]
