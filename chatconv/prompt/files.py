"""Where file references of eval files were read before chatconv.references: its names, kept
importable from here for code written against this module."""

from ..reference_files import FileReferenceError, read_segment_text
from ..references import find_repo_root, resolve_reference, search_folders

__all__ = ["FileReferenceError", "find_repo_root", "read_segment_text", "resolve_reference", "search_folders"]
