"""Paths that are URLs: every command reads s3:// objects and folders as it reads files and
folders, writes objects whole or not at all, and a cluster's workers read an object's batches
themselves. The store is a real S3 API, moto's server on 127.0.0.1, started here (never a mock
of the client): what chatconv sends is what S3 gets."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentv import agentv, needs_node, refused_by_agentv
from conftest import DATA, RECORDED, legacy_bytes, run_chatconv

pytest.importorskip("s3fs", reason='object storage needs s3fs (pip install "chatconv[s3]")')
pytest.importorskip("moto.server", reason="the S3 server the tests run against is moto's (the test extras)")


@contextmanager
def _moto_server(**environment):
    """A moto S3 server on a free port of 127.0.0.1: its URL. Its log (a line a request) goes to
    a file: a pipe nobody reads fills up, and the server then hangs on its next line."""
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", "0"],
                                  stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, **environment})
        try:
            deadline = time.monotonic() + 30
            while not (found := re.search(r"Running on (http://127\.0\.0\.1:\d+)", _read(log))):
                assert server.poll() is None and time.monotonic() < deadline, "moto's server did not start"
                time.sleep(0.05)
            url = found.group(1)
            while True:
                try:
                    urllib.request.urlopen(f"{url}/moto-api/", timeout=2).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, "moto's server does not answer"
                    time.sleep(0.05)
            yield url
        finally:
            server.terminate()
            server.wait(10)


def _read(log) -> str:
    log.seek(0)
    return log.read()


@pytest.fixture(scope="session")
def moto_url():
    """The S3 server of this test process."""
    with _moto_server() as url:
        yield url


def s3_environment(endpoint: str, key: str = "client") -> dict[str, str]:
    """What an AWS tool reads: the endpoint, credentials (moto takes any), no instance metadata
    (its address is no loopback one), few retries (a dead endpoint fails in under a second)."""
    return {"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL_S3": endpoint, "AWS_EC2_METADATA_DISABLED": "true", "AWS_MAX_ATTEMPTS": "2"}


@pytest.fixture
def bucket(moto_url, monkeypatch):
    """A new bucket (the server is shared by the tests of this process); the environment points
    this process and the commands it runs at the server."""
    import fsspec

    for name, value in s3_environment(moto_url).items():
        monkeypatch.setenv(name, value)
    fs = fsspec.filesystem("s3", skip_instance_cache=True)
    name = f"b-{uuid.uuid4().hex[:12]}"
    fs.mkdir(name)
    return _Bucket(name, fs)


class _Bucket:
    def __init__(self, name, fs):
        self.name, self.fs = name, fs

    def url(self, key: str = "") -> str:
        return f"s3://{self.name}/{key}"

    def put_tree(self, folder: Path, prefix: str) -> str:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                self.fs.pipe_file(f"{self.name}/{prefix}/{file.relative_to(folder).as_posix()}", file.read_bytes())
        return self.url(prefix)

    def get(self, key: str) -> bytes:
        return self.fs.cat_file(f"{self.name}/{key}")

    def keys(self, prefix: str = "") -> list[str]:
        self.fs.invalidate_cache()
        return sorted(k[len(self.name) + 1:] for k in self.fs.find(f"{self.name}/{prefix}"))

    def uploads(self) -> list:
        return self.fs.call_s3("list_multipart_uploads", Bucket=self.name).get("Uploads", [])


def _tree(tmp_path: Path) -> Path:
    """A folder of recordings as teams keep them: plain, gzip and zstd JSONL, a legacy one, a
    folder inside, a hidden folder (not searched), a file of another kind (not read)."""
    import zstandard

    root = tmp_path / "runs"
    (root / "sub").mkdir(parents=True)
    (root / ".cache").mkdir()
    weather = (RECORDED / "weather-steps.jsonl").read_bytes()
    (root / "weather.jsonl").write_bytes(weather)
    (root / "sub" / "travel.jsonl.gz").write_bytes(gzip.compress((RECORDED / "travel-planner-steps.jsonl").read_bytes()))
    (root / "sub" / "letters.jsonl.zst").write_bytes(
        zstandard.ZstdCompressor().compress((RECORDED / "demand-letter-steps.jsonl").read_bytes()))
    (root / "legacy.jsonl").write_bytes(legacy_bytes(weather))
    shutil.copy(DATA / "formats" / "openai-chat" / "finetune.jsonl", root / "sub" / "finetune.jsonl")  # for import
    (root / ".cache" / "hidden.jsonl").write_bytes(b"{not json\n")
    (root / "notes.txt").write_text("not a recording\n")
    (root / "a b").mkdir()  # names a URL escapes (https://…/a%20b/%C3%BC.jsonl)
    (root / "a b" / "ü.jsonl").write_bytes(weather.replace(b"weather-trajectory", "weather-ü".encode()))
    return root


def _same_as_local(local: subprocess.CompletedProcess, remote: subprocess.CompletedProcess, url: str, folder: Path):
    """The remote run's output and exit status are the local run's, its paths the URL's."""
    assert remote.returncode == local.returncode, remote.stderr_text
    assert remote.stdout.replace(url.rstrip("/").encode(), b"runs") == local.stdout
    assert remote.stderr_text.replace(url.rstrip("/"), "runs") == local.stderr_text


@pytest.mark.parametrize("command", [["validate"], ["text"], ["tools"], ["dataset"], ["export", "--to", "openai-chat"],
                                     ["import"]])
def test_every_reading_command_reads_a_bucket_folder_as_it_reads_the_local_folder(tmp_path, bucket, command):
    folder = _tree(tmp_path)
    url = bucket.put_tree(folder, "runs")
    bucket.fs.pipe_file(f"{bucket.name}/runs-other/x.jsonl", b"{not json\n")  # beside runs/, not in it
    local = run_chatconv(*command, "runs", cwd=tmp_path)
    remote = run_chatconv(*command, url, cwd=tmp_path)
    _same_as_local(local, remote, url, folder)
    assert remote.stdout or remote.stderr  # (something was read: the comparison is not of two empty runs)


def test_a_folder_named_without_its_slash_and_objects_named_one_by_one_read_alike(tmp_path, bucket):
    url = bucket.put_tree(_tree(tmp_path), "runs")
    bucket.fs.pipe_file(f"{bucket.name}/runs/marker/", b"")  # the empty "folder" object some tools write
    with_slash = run_chatconv("validate", url + "/", cwd=tmp_path)
    without = run_chatconv("validate", url, cwd=tmp_path)
    named = run_chatconv("validate", *(bucket.url(f"runs/{key}") for key in (  # in a search's order
        "legacy.jsonl", "weather.jsonl", "a b/ü.jsonl", "sub/letters.jsonl.zst", "sub/travel.jsonl.gz")), cwd=tmp_path)
    assert with_slash.stdout_text == without.stdout_text
    assert [line for line in named.stdout_text.splitlines() if line.startswith("s3://")] == \
        [line for line in without.stdout_text.splitlines() if line.startswith("s3://")]
    assert "5 files, 48 records" in without.stdout_text and "hidden" not in without.stdout_text
    bucket.fs.pipe_file(f"{bucket.name}/runs", b"an object named as the folder")
    assert run_chatconv("validate", url + "/", cwd=tmp_path).stdout_text == with_slash.stdout_text
    # An object whose name is also a folder's (a key under it): read as the object it is
    bucket.fs.pipe_file(f"{bucket.name}/runs/weather.jsonl/more.jsonl", (RECORDED / "weather-steps.jsonl").read_bytes())
    both = run_chatconv("validate", url + "/", cwd=tmp_path)
    assert "is a folder" not in both.stdout_text and "6 files, 58 records" in both.stdout_text, both.stdout_text


def test_a_multi_batch_object_is_read_by_range_in_the_workers_and_gives_the_local_output(tmp_path, bucket):
    from test_validate_parallel import _faulty_recording

    (tmp_path / "runs").mkdir()
    path = _faulty_recording(tmp_path / "runs" / "faulty.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:len(lines) * 2 // 5]))  # ~1.6 MB, every kind of fault: two batches
    url = bucket.put_tree(tmp_path / "runs", "runs")
    local = run_chatconv("validate", "--jobs", "1", "runs", cwd=tmp_path)
    remote = run_chatconv("validate", "--jobs", "2", url, cwd=tmp_path)  # (import's batches: the cluster test)
    _same_as_local(local, remote, url, path.parent)
    assert path.stat().st_size > 2**20 and b" error: " in local.stdout  # (two batches; problems to compare)


@pytest.fixture
def web_folder(tmp_path):
    """tmp_path served over http by Python's http.server, which lists folders in index pages
    and ignores Range headers (a whole file for every request)."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_https_folders_are_read_from_their_index_pages_and_a_server_without_ranges_is_refused(tmp_path, web_folder):
    from test_validate_parallel import _faulty_recording

    folder = _tree(tmp_path)
    local = run_chatconv("validate", "runs", cwd=tmp_path)
    remote = run_chatconv("validate", f"{web_folder}/runs/", cwd=tmp_path)
    _same_as_local(local, remote, f"{web_folder}/runs", folder)
    big = _faulty_recording(tmp_path / "big.jsonl")  # ~4 MB: workers would read its batches by range
    result = run_chatconv("validate", "--jobs", "2", f"{web_folder}/big.jsonl", cwd=tmp_path)
    assert result.returncode == 2 and big.stat().st_size > 2**21
    assert f"{web_folder}/big.jsonl:1:1: error: $: cannot be read by range: 1,048," in result.stdout_text
    assert "sent (the server ignores ranges) (read it with --jobs 1, which streams it" in result.stdout_text
    streamed = run_chatconv("validate", "--jobs", "1", f"{web_folder}/big.jsonl", cwd=tmp_path)
    assert streamed.stdout.replace(web_folder.encode() + b"/", b"") == \
        run_chatconv("validate", "big.jsonl", cwd=tmp_path).stdout


def test_a_reader_that_goes_away_ends_a_run_on_objects_as_it_ends_a_local_one(tmp_path, bucket):
    """SIGPIPE is ignored once the network is used (a kept-alive connection the store closes
    must not end the run); standard output's reader going away still ends it quietly."""
    (tmp_path / "w.jsonl").write_bytes((RECORDED / "weather-steps.jsonl").read_bytes() * 2000)  # past a pipe's buffer
    bucket.fs.pipe_file(f"{bucket.name}/w.jsonl", (tmp_path / "w.jsonl").read_bytes())
    for path in (tmp_path / "w.jsonl", bucket.url("w.jsonl")):
        run = subprocess.Popen([sys.executable, "-m", "chatconv", "text", str(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        assert run.stdout.read(10) == b'{"conversa'
        run.stdout.close()
        assert run.wait(60) == -signal.SIGPIPE and run.stderr.read() == b""


def test_reading_objects_through_the_library(bucket):
    from chatconv.sources import discover, iter_records

    bucket.fs.pipe_file(f"{bucket.name}/r/a.jsonl", b'{"x": 1}\n\n{"x": 2}\n')
    bucket.fs.pipe_file(f"{bucket.name}/r/b.yaml", b"x: 3\n")
    found = [file for file, _ in discover([bucket.url("r")])]
    assert found == [bucket.url("r/a.jsonl"), bucket.url("r/b.yaml")]
    assert [(r.line, r.data) for f in found for r in iter_records(f)] == [(1, {"x": 1}), (3, {"x": 2}), (1, {"x": 3})]


def test_memory_urls_are_read_in_process():
    import fsspec

    from chatconv.sources import discover, iter_records

    fs = fsspec.filesystem("memory")
    fs.pipe_file("/t-objstore/runs/a.jsonl.gz", gzip.compress(b'{"x": 1}\n'))
    assert [(f, [r.data for r in iter_records(f)]) for f, _ in discover(["memory://t-objstore/runs"])] == \
        [("memory:///t-objstore/runs/a.jsonl.gz", [{"x": 1}])]


def test_what_cannot_be_read_is_said_of_the_url_with_no_traceback(tmp_path, bucket, monkeypatch):
    bucket.fs.pipe_file(f"{bucket.name}/ok.jsonl", (RECORDED / "weather-steps.jsonl").read_bytes())
    result = run_chatconv("validate", bucket.url("missing.jsonl"), "s3://no-such-bucket-here/a.jsonl",
                          bucket.url("ok.jsonl"), cwd=tmp_path)
    assert result.returncode == 2
    assert f"{bucket.url('missing.jsonl')}:1:1: error: $: no such object (check the URL)" in result.stdout_text
    assert "s3://no-such-bucket-here/a.jsonl:1:1: error: $: no such bucket (check the URL)" in result.stdout_text
    assert "1 file, 10 records: 2 errors" in result.stdout_text  # the object that is there is read
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    started = time.monotonic()
    result = run_chatconv("validate", bucket.url("ok.jsonl"), cwd=tmp_path, timeout=60)
    assert result.returncode == 2 and time.monotonic() - started < 30
    assert "error: $: cannot be read: EndpointConnectionError" in result.stdout_text
    assert "(check the endpoint (AWS_ENDPOINT_URL_S3)" in result.stdout_text


def test_a_store_that_refuses_the_credentials_is_access_denied(tmp_path, monkeypatch):
    with _moto_server(INITIAL_NO_AUTH_ACTION_COUNT="0") as url:  # moto checks credentials: ours are unknown
        for name, value in s3_environment(url).items():
            monkeypatch.setenv(name, value)
        result = run_chatconv("validate", "s3://any-bucket/runs/a.jsonl", cwd=tmp_path)
    assert result.returncode == 2
    assert "s3://any-bucket/runs/a.jsonl:1:1: error: $: access denied (check the credentials (AWS_PROFILE, " \
        "AWS_ACCESS_KEY_ID, ...))" in result.stdout_text


def test_a_url_of_a_store_whose_package_is_missing_is_a_usage_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "fsspec.core", None)  # as where fsspec is not installed
    from chatconv.problems import UsageError
    from chatconv.sources import iter_records

    with pytest.raises(UsageError, match=r'reading URLs needs fsspec: pip install "chatconv\[s3\]"'):
        list(iter_records("s3://bucket/a.jsonl"))
    result = run_chatconv("validate", "gs://bucket/a.jsonl", cwd=tmp_path)  # gcsfs is not installed
    assert result.returncode == 2 and "gs://bucket/a.jsonl: Please install gcsfs" in result.stderr_text


def test_an_eval_file_read_from_a_url_says_its_references_are_not_followed(tmp_path, bucket):
    url = bucket.put_tree(Path(__file__).parent.parent / "examples" / "evals", "evals")
    result = run_chatconv("validate", f"{url}/code-review.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert "file-reference" in result.stdout_text and "not followed: the eval file was read from a URL" \
        in result.stdout_text and "no-repository" not in result.stdout_text


def test_migrating_a_bucket_folder_into_a_bucket_folder_writes_what_a_local_run_writes(tmp_path, bucket):
    folder = _tree(tmp_path)
    url = bucket.put_tree(folder, "runs")
    local = run_chatconv("migrate", "runs", "-o", "out/", cwd=tmp_path)
    remote = run_chatconv("migrate", url, "-o", bucket.url("out/"), cwd=tmp_path)
    assert local.returncode == remote.returncode == 0, remote.stderr_text
    written = {str(p.relative_to(tmp_path / "out")): p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert {key.removeprefix("out/"): bucket.get(key) for key in bucket.keys("out")} == written
    assert "legacy.jsonl" in written and written["legacy.jsonl"] != (folder / "legacy.jsonl").read_bytes()
    assert gzip.decompress(written["sub/travel.jsonl.gz"])  # gzip stays gzip
    assert bucket.uploads() == []
    # The folder named otherwise (s3a://, a doubled /): the same keys
    spelled = run_chatconv("migrate", f"s3a://{bucket.name}//runs/", "-o", bucket.url("out2/"), cwd=tmp_path)
    assert spelled.returncode == 0 and [k.removeprefix("out2/") for k in bucket.keys("out2")] == sorted(written)
    result = run_chatconv("migrate", url, "-o", "s3://", cwd=tmp_path)
    assert result.returncode == 2 and "s3://: names no bucket (write s3://BUCKET/KEY)" in result.stderr_text


def test_migrating_objects_in_place_keeps_a_backup_and_refuses_an_object_that_changed(tmp_path, bucket, monkeypatch):
    from chatconv.migrate import migrate_file
    from chatconv.problems import UnreadableInput

    old = legacy_bytes((RECORDED / "weather-steps.jsonl").read_bytes())
    bucket.fs.pipe_file(f"{bucket.name}/w.jsonl", old)
    (tmp_path / "w.jsonl").write_bytes(old)
    assert run_chatconv("migrate", "--in-place", "w.jsonl", cwd=tmp_path).returncode == 0
    result = run_chatconv("migrate", "--in-place", "--backup", bucket.url("w.jsonl"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr_text
    assert bucket.get("w.jsonl") == (tmp_path / "w.jsonl").read_bytes() != old
    assert bucket.get("w.jsonl.bak") == old

    bucket.fs.pipe_file(f"{bucket.name}/w.jsonl", old)
    url = bucket.url("w.jsonl")
    meanwhile = b'{"written": "by another process"}\n'

    def another_writer(done):  # called after the file's bytes are read, before the new object is made whole
        bucket.fs.pipe_file(f"{bucket.name}/w.jsonl", meanwhile)

    with pytest.raises(UnreadableInput, match="changed while it was migrated: not replaced"):
        migrate_file(url, url, progress=another_writer)
    assert bucket.get("w.jsonl") == meanwhile and bucket.uploads() == []

    # Written over after it was opened, before its upload began: what was read is the old
    # object's, and the guard is the ETag of those bytes, not the new object's.
    import chatconv.migrate.files as files

    bucket.fs.pipe_file(f"{bucket.name}/w.jsonl", old)
    sink = files.replacing
    monkeypatch.setattr(files, "replacing", lambda *args, **options: (another_writer(0), sink(*args, **options))[1])
    with pytest.raises(UnreadableInput, match="changed while it was migrated: not replaced"):
        migrate_file(url, url)
    assert bucket.get("w.jsonl") == meanwhile and bucket.uploads() == []
    monkeypatch.setattr(files, "replacing",
                        lambda *args, **options: (bucket.fs.rm_file(f"{bucket.name}/w.jsonl"), sink(*args, **options))[1])
    bucket.fs.pipe_file(f"{bucket.name}/w.jsonl", old)
    with pytest.raises(UnreadableInput, match="went away while it was migrated: not replaced"):
        migrate_file(url, url)
    assert bucket.keys() == ["w.jsonl.bak"] and bucket.uploads() == []


def test_a_store_that_goes_away_part_way_through_an_object_is_said_so(tmp_path, monkeypatch):
    from chatconv.problems import UnreadableInput
    from chatconv.sources import iter_line_batches, open_binary

    with _moto_server() as url:
        for name, value in s3_environment(url).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
        import fsspec

        fs = fsspec.filesystem("s3", skip_instance_cache=True)
        fs.mkdir("gone")
        type(fs).clear_instance_cache()  # (chatconv's own would be the one of the other server)
        fs.pipe_file("gone/big.jsonl", (RECORDED / "weather-steps.jsonl").read_bytes() * 3000)  # 24 MB
        stream = open_binary("s3://gone/big.jsonl")
        batches = iter_line_batches(stream)
        assert next(batches).first_line == 1
    with pytest.raises(UnreadableInput, match=r"s3://gone/big.jsonl:1:1: error: \$: cannot be read: "
                                              r"EndpointConnectionError"):
        for _ in batches:  # the 8 MiB read ahead used up, then the server is gone
            pass


def test_a_migration_that_stops_part_way_leaves_no_object_and_no_upload(tmp_path, bucket):
    """A record that stops the file after 12 MiB were uploaded (two parts): nothing appears
    under the name, and the upload is aborted (its parts freed)."""
    good = (RECORDED / "weather-steps.jsonl").read_bytes()
    big = legacy_bytes(good) * (12 * 2**20 // len(good) + 1) + b'{"stepIndex": "not a number"\n'
    bucket.fs.pipe_file(f"{bucket.name}/big.jsonl", big)
    result = run_chatconv("migrate", bucket.url("big.jsonl"), "-o", bucket.url("out/big.jsonl"), cwd=tmp_path)
    assert result.returncode != 0 and "big.jsonl" in result.stderr_text
    assert bucket.keys("out") == [] and bucket.uploads() == []


def test_a_migration_killed_part_way_leaves_no_object_under_the_name(tmp_path, bucket):
    good = (RECORDED / "weather-steps.jsonl").read_bytes()
    (tmp_path / "big.jsonl").write_bytes(legacy_bytes(good) * (24 * 2**20 // len(good)))
    run = subprocess.Popen([sys.executable, "-m", "chatconv", "migrate", "big.jsonl", "-o", bucket.url("out/big.jsonl")],
                           cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _parts_uploaded(bucket):  # killed once the upload has begun
            assert run.poll() is None and time.monotonic() < deadline, "the upload never began"
            time.sleep(0.05)
        run.send_signal(signal.SIGKILL)
        run.wait(10)
        assert bucket.keys("out") == []
    finally:
        run.kill()
        for upload in bucket.uploads():
            bucket.fs.call_s3("abort_multipart_upload", Bucket=bucket.name, Key=upload["Key"],
                              UploadId=upload["UploadId"])


def _parts_uploaded(bucket) -> bool:
    return any(bucket.fs.call_s3("list_parts", Bucket=bucket.name, Key=u["Key"], UploadId=u["UploadId"]).get("Parts")
               for u in bucket.uploads())


def test_export_writes_an_object_whole_and_https_cannot_be_written(tmp_path, bucket):
    local = run_chatconv("export", "--to", "openai-chat", RECORDED / "weather-steps.jsonl", cwd=tmp_path)
    remote = run_chatconv("export", "--to", "openai-chat", RECORDED / "weather-steps.jsonl", "-o",
                          bucket.url("bodies.jsonl"), cwd=tmp_path)
    assert remote.returncode == 0 and bucket.get("bodies.jsonl") == local.stdout
    # Written over what it reads, however the URL is spelled: refused, as for a file
    result = run_chatconv("import", bucket.url("bodies.jsonl"), "-o", f"S3a://{bucket.name}/bodies.jsonl", cwd=tmp_path)
    assert result.returncode == 2 and "is one of the files read: writing it would replace what was read" \
        in result.stderr_text and bucket.get("bodies.jsonl") == local.stdout
    result = run_chatconv("migrate", RECORDED / "weather-steps.jsonl", "-o", "https://example.com/x.jsonl", cwd=tmp_path)
    assert result.returncode == 2
    assert "https://example.com/x.jsonl: error: cannot be written: http(s):// URLs are read only" in result.stderr_text
    result = run_chatconv("migrate", "--in-place", bucket.url("bodies.jsonl"), "--rejects", bucket.url("r.jsonl"))
    assert result.returncode == 2 and "an object cannot be appended to; give a local file" in result.stderr_text


@pytest.fixture(scope="module")
def store_cluster(moto_url):
    """A local Dask cluster whose workers, and they alone, reach the store."""
    distributed = pytest.importorskip("distributed", reason='the cluster runs need Dask (pip install "chatconv[dask]")')
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  env=s3_environment(moto_url, key="cluster")) as cluster:
        yield cluster


@pytest.mark.parametrize("command", [["validate", "--format", "json"], ["tools"], ["import"]])
def test_on_a_cluster_the_workers_read_the_bucket_and_the_output_is_the_local_one(tmp_path, bucket, store_cluster,
                                                                                     monkeypatch, command):
    from test_validate_parallel import _faulty_recording

    folder = _tree(tmp_path)
    if command[0] != "tools":  # (tools reads an object whole, here: see RecordRunner.results)
        path = _faulty_recording(folder / "faulty.jsonl")
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:len(lines) * 2 // 5]))  # two batches, each read by a worker, by range
    url = bucket.put_tree(folder, "runs")
    local = run_chatconv(*command, "runs", cwd=tmp_path)
    # This machine cannot reach the store: what is read of it, the workers read.
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    remote = run_chatconv(*command, url, "--scheduler", store_cluster.scheduler_address, cwd=tmp_path)
    _same_as_local(local, remote, url, folder)
    alone = run_chatconv("validate", bucket.url("runs/weather.jsonl"), cwd=tmp_path)
    assert alone.returncode == 2 and "EndpointConnectionError" in alone.stdout_text + alone.stderr_text


@needs_node
def test_an_eval_folder_migrated_from_a_bucket_into_a_bucket_is_run_whole_by_agentv(tmp_path, bucket):
    """What is written to the store is asked of its consumer: AgentV 4.42.4's validate and
    loader (the tests era's), on the objects as downloaded, with the grader script the -o
    folder's copy brought along."""
    from test_agentv_migrations import V2_GRADERS

    bucket.fs.pipe_file(f"{bucket.name}/suite/suite.eval.yaml", V2_GRADERS.encode())
    bucket.fs.pipe_file(f"{bucket.name}/suite/check.py", b"print('ok')\n")
    result = run_chatconv("migrate", "--to", "tests", bucket.url("suite/"), "-o", bucket.url("out/"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr_text
    root = tmp_path / "downloaded"
    (root / ".git").mkdir(parents=True)
    for key in bucket.keys("out"):
        (root / key.removeprefix("out/")).write_bytes(bucket.get(key))
    assert sorted(p.name for p in root.iterdir() if p.is_file()) == ["check.py", "suite.eval.yaml"]
    assert b"evalcases" not in (root / "suite.eval.yaml").read_bytes()  # moved forward
    assert refused_by_agentv("v4.42.4", ["suite.eval.yaml"], root) == {}
    [loaded] = agentv("v4.42.4", "load", ["suite.eval.yaml"], root)
    assert loaded["ok"] and loaded["ids"] == ["one", "two"], loaded["error"]
