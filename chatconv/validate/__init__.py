"""Validation: schema check (fast path), explanation (slow path, failing records only), and the
checks a schema cannot state (unique ids, tool-call pairing, step order, referenced files).

run (files and folders, workers), lines (the hot path over JSONL lines), wire (its entries
to and from the workers), record (one record),
schema (schema check, legacy shapes), explain (schema errors as problems), rendered (problems
written by the workers), order (problems handed on sorted), eval_files,
conversations (checks across the steps of recordings). The names below are the public API.
"""

from ..kinds import KIND_ALIASES, RECORDING_KINDS, canonical_kind, detect_kind, kind_names
from ..pairing import CONVERSATION_WINDOW
from ..sources import BATCH_BYTES, discover
from .conversations import (RecordingChecks, RecordSource, ToolPart, duplicate_call_problem, light_record,
                            orphan_result_problem, step_facts, tool_parts)
from .eval_files import (KNOWN_EVALUATOR_TYPES, check_eval_document, check_eval_file, check_guideline_patterns,
                         load_eval_file, read_eval_file)
from .explain import explain
from .lines import (NOT_A_RECORD, NOT_OURS, RECORD, Entry, LineOptions, LineSpan, Outcome, StepRun, ToolLine,
                    check_lines, record_entry)
from .wire import LineBatch, check_file_lines
from .record import ChecksAcrossRecords, check_record, validate_record
from .rendered import ProblemBlock, Rendering
from ..sources import PARALLEL_MIN_BYTES
from .run import Summary, Validator, validate_path
from .schema import check_schema

__all__ = [
    "BATCH_BYTES", "CONVERSATION_WINDOW", "KIND_ALIASES", "KNOWN_EVALUATOR_TYPES", "NOT_A_RECORD", "NOT_OURS",
    "PARALLEL_MIN_BYTES", "RECORD", "RECORDING_KINDS", "ChecksAcrossRecords", "Entry", "LineBatch",
    "LineOptions", "LineSpan", "Outcome", "ProblemBlock", "RecordSource", "Rendering", "RecordingChecks", "StepRun",
    "Summary", "ToolLine",
    "ToolPart", "Validator", "canonical_kind", "check_eval_document", "check_eval_file", "check_file_lines",
    "check_guideline_patterns", "check_lines", "check_record", "check_schema", "detect_kind", "discover",
    "duplicate_call_problem", "explain", "kind_names", "light_record", "load_eval_file", "read_eval_file",
    "orphan_result_problem", "record_entry", "step_facts", "tool_parts", "validate_path", "validate_record",
]
