"""The migration engine: finds the numbered modules in migrations/, chains them, and rewrites
JSONL recordings and YAML / JSON documents without losing a byte of meaning.

`migrate_record` upgrades one record, `migrate_lines` a block of JSONL bytes (bytes in, bytes
out: it runs as it is inside other engines, e.g. Dask), `migrate_file` a whole file, and
`migrate_paths` files and folders as `chatconv migrate` does.

registry (the migrations), edits (helpers for migration authors), lines (JSONL), documents and
yaml_rewrite (YAML / JSON), atomic (the atomic rewrite), batches (worker processes), files
(one file), plan (which files, written where), run (many paths). The names below are the
package's public API.
"""

from importlib import import_module
from typing import TYPE_CHECKING

from ..sources import BATCH_BYTES
from .edits import (append_moving_comment, cases_in, declare_era, in_era, insert_after, insert_before, move_comment,
                    new_like, new_list_like, quoted_like, refusal, rename_key)
from .registry import Migration, Refused, is_legacy, migrate_record, migrations, migrations_for, upgrade_record

# The rest is imported when first asked for: validate reads legacy records with the registry
# alone, in each worker, and the rest (YAML rewriting, worker pools) would cost each one 40 ms.
_LATER = {
    "AtomicFile": "atomic", "Workers": "batches", "migrate_document": "documents", "migrate_file": "files",
    "EXAMPLES_KEPT": "lines", "LineRejected": "lines", "MigratedLines": "lines", "Reject": "lines", "Tally": "lines",
    "migrate_lines": "lines", "plan_targets": "plan", "refuse_rejects_among": "plan", "MigratedFile": "run",
    "migrate_paths": "run",
}

if TYPE_CHECKING:
    from .atomic import AtomicFile
    from .batches import Workers
    from .documents import migrate_document
    from .files import migrate_file
    from .lines import EXAMPLES_KEPT, LineRejected, MigratedLines, Reject, Tally, migrate_lines
    from .plan import plan_targets, refuse_rejects_among
    from .run import MigratedFile, migrate_paths


def __getattr__(name: str):
    module = _LATER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

__all__ = [
    "BATCH_BYTES", "EXAMPLES_KEPT", "AtomicFile", "append_moving_comment", "LineRejected", "MigratedFile", "MigratedLines", "Migration",
    "Refused", "Reject", "Tally", "Workers", "cases_in", "declare_era", "in_era", "insert_after", "insert_before", "is_legacy",
    "migrate_document", "migrate_file", "migrate_lines", "migrate_paths", "migrate_record", "migrations",
    "migrations_for", "move_comment", "new_like", "new_list_like", "plan_targets", "quoted_like", "refusal", "refuse_rejects_among",
    "rename_key", "upgrade_record",
]
