"""chatconv: schema-first validation and migration of LLM eval data.

The public API, importable from here without knowing the modules (`from chatconv import
validate_path`). Names load their module on first use, so that `import chatconv` (and the
command's start-up) costs nothing for the parts a run does not need.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "chatconv.problems": ["CODES", "ChatconvError", "Problem", "UnreadableInput", "UsageError"],
    "chatconv.kinds": ["detect_kind"],
    "chatconv.schemas": ["load_schema", "schema_names"],
    "chatconv.sources": ["Record", "iter_records"],
    "chatconv.validate": ["Summary", "Validator", "load_eval_file", "validate_path", "validate_record"],
    "chatconv.migrate": ["MigratedFile", "migrate_document", "migrate_file", "migrate_lines", "migrate_paths",
                         "migrate_record", "plan_targets"],
    "chatconv.eras": ["era_of"],
    "chatconv.formats": ["FORMATS", "export_bodies", "from_openai_messages", "import_paths", "read", "write"],
    "chatconv.models": ["parse_record", "read_records"],
    "chatconv.prompt": ["EvalFileContext", "PromptOptions", "Segment", "build_prompt_inputs", "build_prompts",
                        "convert_to_chat_prompt"],
    "chatconv.providers": ["ProviderRuleError", "build_chat_prompt", "render_anthropic", "render_gemini",
                           "render_openai", "render_request"],
    "chatconv.messages": ["extract_text_from_message", "extract_text_from_messages",
                          "extract_tool_calls_from_messages", "extract_tool_results_from_messages",
                          "normalize_output"],
    "chatconv.recordings": ["conversation_messages", "conversation_to_dataset", "dataset_item",
                            "iter_recording_steps", "step_text", "tool_rows"],
    "chatconv.pairing": ["ToolPairing"],
    "chatconv.history": ["to_native_messages", "trim_to_budget"],
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'chatconv' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next use finds it without this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
