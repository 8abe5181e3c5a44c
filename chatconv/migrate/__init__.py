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

from ..sources import BATCH_BYTES
from .atomic import AtomicFile
from .batches import Workers
from .documents import migrate_document
from .edits import (cases_in, declare_era, in_era, insert_after, insert_before, move_comment, new_like, new_list_like,
                    quoted_like, refusal, rename_key)
from .files import migrate_file
from .lines import EXAMPLES_KEPT, LineRejected, MigratedLines, Reject, Tally, migrate_lines
from .plan import plan_targets, refuse_rejects_among
from .registry import Migration, Refused, is_legacy, migrate_record, migrations, migrations_for, upgrade_record
from .run import MigratedFile, migrate_paths

__all__ = [
    "BATCH_BYTES", "EXAMPLES_KEPT", "AtomicFile", "LineRejected", "MigratedFile", "MigratedLines", "Migration",
    "Refused", "Reject", "Tally", "Workers", "cases_in", "declare_era", "in_era", "insert_after", "insert_before", "is_legacy",
    "migrate_document", "migrate_file", "migrate_lines", "migrate_paths", "migrate_record", "migrations",
    "migrations_for", "move_comment", "new_like", "new_list_like", "plan_targets", "quoted_like", "refusal", "refuse_rejects_among",
    "rename_key", "upgrade_record",
]
