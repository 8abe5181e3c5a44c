"""Beyond one machine: migrate_lines mapped over the partitions of a folder of JSONL files on a
Dask cluster writes the same bytes as `chatconv migrate` (the README shows the same code)."""

from __future__ import annotations

from pathlib import Path

import dask
import dask.bytes
from distributed import Client, LocalCluster

from chatconv.migrate import migrate_lines
from conftest import recorded_files, run_chatconv
from test_migrate import legacy_bytes


def test_migrate_lines_on_a_local_dask_cluster_writes_what_the_cli_writes(tmp_path):
    folder = tmp_path / "recordings"
    folder.mkdir()
    for path in recorded_files():
        (folder / path.name).write_bytes(legacy_bytes(path.read_bytes()))
    many = b"".join((folder / path.name).read_bytes().rstrip(b"\n") + b"\n" for path in recorded_files())
    (folder / "many.jsonl").write_bytes(many * 40)  # ~2.7 MB: many partitions
    cli_out = tmp_path / "cli"
    assert run_chatconv("migrate", folder, "-o", cli_out).returncode == 0

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster):
        _, blocks, paths = dask.bytes.read_bytes(str(folder / "*.jsonl"), delimiter=b"\n", blocksize="256 kB",
                                                 sample=False, include_path=True)
        migrated = dask.compute([[dask.delayed(migrate_lines)(block, path) for block in file_blocks]
                                 for file_blocks, path in zip(blocks, paths)])[0]

    assert len(blocks[paths.index(str(folder / "many.jsonl"))]) > 5
    for path, parts in zip(paths, migrated):
        assert b"".join(part.data for part in parts) == (cli_out / Path(path).name).read_bytes()
    assert sum(part.tally.migrated for parts in migrated for part in parts) == 45 * 41
