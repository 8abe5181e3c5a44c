"""Sources: YAML, JSON and JSONL read into records that know where they came from.

text (bytes, encodings, blank lines), batches (a JSONL file cut into batches of whole lines),
compressed (.gz and .zst read and written), remote (objects named by URL: s3://) and objects (their bytes), yaml, json, record (positions), stdin,
discovery (which files a search reads), files (every record of a file). The names below are the package's public API.
"""

from ..kinds import detect_kind
from .arrays import element_records, holds_records, read_as_records
from .fields import (CONVERSATION_FIELDS, FIELD_NAMES, STEP_FIELDS, FieldClash, FieldMap, adapt, adapt_record, parse_field_map,
                     restore, split_key)
from .compressed import COMPRESSIONS, compression_of, without_compression
from .discovery import discover
from .files import (COMPRESSED_JSONL_SUFFIXES, DATA_SUFFIXES, JSON_SUFFIXES, JSONL_SUFFIXES, YAML_SUFFIXES, data_suffix,
                    configured_release, eval_pattern_config, file_format, iter_jsonl_file,
                    iter_jsonl_stream, iter_records, load_document, nearest_config, read_document)
from .ignore import walking_everything
from .json import NotWritten, duplicate_keys, exact_json, integers_beyond_64_bits, iter_jsonl, load_json
from .record import Position, Record, problem_at
from .stdin import StdinInput, read_stdin, read_stdin_head, stdin_document_format
from .writing import CompressedWriter
from .batches import (BATCH_BYTES, PARALLEL_MIN_BYTES, Batch, batch_workers, cycle_collector_paused, iter_line_batches,
                      read_batch, read_by_offset)
from .text import (UTF8_BOM, decode_utf8, empty_file_problem, file_too_large, holds_no_record, is_blank_line, open_binary,
                   read_whole, refuse_foreign_encoding, stream_etag, stream_size)
from .objects import open_raw
from .remote import is_url, remote_isdir, stored_size
from .yaml import MAX_ALIAS_COPIES, load_yaml
from .yaml_parse import MAX_YAML_DEPTH, yaml_parse_problem

__all__ = [
    "CONVERSATION_FIELDS", "FIELD_NAMES", "STEP_FIELDS", "FieldClash", "FieldMap", "adapt", "adapt_record", "parse_field_map", "restore",
    "split_key",
    "BATCH_BYTES", "PARALLEL_MIN_BYTES", "COMPRESSED_JSONL_SUFFIXES", "COMPRESSIONS", "CompressedWriter", "DATA_SUFFIXES", "JSONL_SUFFIXES",
    "JSON_SUFFIXES", "MAX_ALIAS_COPIES", "MAX_YAML_DEPTH", "UTF8_BOM", "YAML_SUFFIXES", "Batch",
    "NotWritten", "Position", "Record", "StdinInput", "batch_workers", "compression_of", "data_suffix", "decode_utf8", "file_too_large",
    "configured_release", "detect_kind", "eval_pattern_config", "nearest_config",
    "discover", "duplicate_keys", "element_records", "holds_records", "empty_file_problem", "exact_json", "file_format",
    "holds_no_record", "integers_beyond_64_bits", "read_as_records", "is_blank_line", "iter_jsonl", "iter_jsonl_file",
    "cycle_collector_paused", "iter_jsonl_stream", "iter_line_batches", "iter_records", "load_document", "load_json", "load_yaml", "open_binary",
    "problem_at", "read_batch", "read_by_offset", "read_document", "read_whole", "read_stdin", "read_stdin_head",
    "refuse_foreign_encoding", "stdin_document_format", "walking_everything", "without_compression", "yaml_parse_problem",
    "stream_etag", "stream_size", "is_url", "open_raw", "remote_isdir", "stored_size",
]
