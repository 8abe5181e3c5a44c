"""Eval case -> the prompt AgentV builds for it, release by release (agentv), or chatconv's own
seed form: segments -> ChatPrompt and question (convert).

context: an eval file's root, guideline patterns and positions; load: the prompts of an eval
file's cases, in either form.
"""

from .convert import (DEFAULT_SYSTEM_PROMPT, GUIDELINES_HEADER, SYSTEM_POLICIES, PromptInputs,
                      PromptOptions, Segment, build_prompt_inputs, build_question,
                      convert_to_chat_prompt, resolve_segments)
from .context import EvalFileContext, config_patterns
from .agentv import AGENTV_SYSTEM_PROMPT, AgentVInputs, agentv_prompt_inputs
from .load import FORMS, CasePrompt, EvalFilePrompts, UnknownCase, build_prompts

__all__ = [
    "AGENTV_SYSTEM_PROMPT", "FORMS", "AgentVInputs", "agentv_prompt_inputs", "DEFAULT_SYSTEM_PROMPT", "GUIDELINES_HEADER", "SYSTEM_POLICIES", "CasePrompt", "EvalFileContext",
    "EvalFilePrompts", "PromptInputs", "PromptOptions", "Segment", "UnknownCase", "build_prompt_inputs",
    "build_prompts", "build_question", "config_patterns", "convert_to_chat_prompt", "resolve_segments",
]
