"""Eval case -> segments -> ChatPrompt and question (seeds 000-002).

convert: the conversion itself; context: an eval file's root, guideline patterns and
positions; load: the prompts of an eval file's cases.
"""

from .convert import (DEFAULT_SYSTEM_PROMPT, GUIDELINES_HEADER, SYSTEM_POLICIES, PromptInputs,
                      PromptOptions, Segment, build_prompt_inputs, build_question,
                      convert_to_chat_prompt, resolve_segments)
from .context import EvalFileContext, config_patterns
from .load import CasePrompt, EvalFilePrompts, UnknownCase, build_prompts

__all__ = [
    "DEFAULT_SYSTEM_PROMPT", "GUIDELINES_HEADER", "SYSTEM_POLICIES", "CasePrompt", "EvalFileContext",
    "EvalFilePrompts", "PromptInputs", "PromptOptions", "Segment", "UnknownCase", "build_prompt_inputs",
    "build_prompts", "build_question", "config_patterns", "convert_to_chat_prompt", "resolve_segments",
]
