"""Recorded conversations as steps: either line style, other field names, legacy shapes read as
current ones; and what is made of them (text, dataset items, the `tools` rows).

steps (reading steps, writing a row back exactly), dataset (text and dataset items), tools
(tool calls paired with their results: tool_events read in workers, tool_pairing across
steps). Other tools' formats are read and written by chatconv.formats.
"""

from ..messages import conversation_messages
# --field is read by sources (validate and migrate take it too); named here as they always were.
from ..sources import (CONVERSATION_FIELDS, FIELD_NAMES, STEP_FIELDS, FieldClash, NotWritten, adapt, adapt_record,
                       exact_json, parse_field_map)
from .dataset import conversation_to_dataset, dataset_item, step_text, step_to_dataset_item
from .steps import Step, iter_paths_records, iter_paths_steps, iter_recording_steps, step_row_json
from .rows import iter_step_rows
from .tool_events import tool_parts
from .tool_pairing import ToolRows
from .tools import tool_row_lines, tool_rows

__all__ = [
    "CONVERSATION_FIELDS", "FIELD_NAMES", "STEP_FIELDS", "ToolRows", "FieldClash", "NotWritten", "Step",
    "adapt", "adapt_record", "exact_json", "iter_paths_records", "iter_paths_steps",
    "conversation_messages", "conversation_to_dataset", "dataset_item",
    "iter_recording_steps", "parse_field_map", "step_row_json", "step_text", "step_to_dataset_item",
    "iter_step_rows", "tool_parts", "tool_row_lines", "tool_rows",
]
