"""What a ``memstore`` command imports: ``--help`` loads no store, gate or model; the
read commands load the store but no verifier or embedder (nor alembic, networkx,
numpy or Arrow); only ``search`` loads the embedder (on onnxruntime: torch is not
imported). Each command runs in a fresh interpreter (the console script's ``main``),
which then lists the modules it loaded. How long they take is measured by
``bench/startup.py``, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memstore
from gate.backends.embedded import shared_encoder
from gate.backends.embedded.backend import minilm_path
from gate.backends.embedded.onnx_minilm import OnnxMiniLM, cache_dir

#: Runs ``memstore ARGS`` as the console script does, then prints its modules as JSON.
PROBE = """
import json, sys
from memstore.cli import main
sys.argv = ["memstore", *sys.argv[1:]]
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code or 0
print("\\nMODULES " + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

#: Loaded by none of the commands below but ``search`` (the embedder and its model).
MODEL = ("torch", "sentence_transformers", "transformers", "gate.backends.embedded")
#: Loaded only where a store is opened.
STORAGE = ("sqlalchemy", "sqlmodel", "alembic", "lancedb", "pyarrow", "numpy", "networkx")
#: memstore's and the gate's heavy modules: the store, the settings, the gate's engine.
PARTS = ("memstore.store", "memstore.config", "memstore.schemas", "gate.engine", "gate.config")

NS = "user:alice"


def loaded(*args: str, store: Path | None = None, **env: str) -> set[str]:
    """The modules ``memstore ARGS`` loaded (it must exit 0), with no memstore settings
    in its environment but ``env``."""
    options = ["--store", str(store), "--namespace", NS] if store else []
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *options, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")} | env,
    )
    marker = done.stdout.rfind("\nMODULES ")
    assert marker >= 0, done.stdout + done.stderr
    found = json.loads(done.stdout[marker + len("\nMODULES ") :])
    assert found["code"] == 0, done.stdout + done.stderr
    return set(found["modules"])


def among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The ``names`` (packages or modules) of which ``modules`` holds any part."""
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store with one fact (written ungated, no index); returns its path and the id."""
    where = tmp_path_factory.mktemp("startup") / "mem"
    with memstore.open(str(where), NS, index=False) as store:
        fact = store.add_fact(
            statement="Alice is allergic to peanuts.",
            members=[{"name": "Alice", "kind": "person"}, {"name": "peanuts", "kind": "food"}],
            evidence=[{"text": "Alice: I'm allergic to peanuts."}],
            ungated=True,
        )
    return where, fact.id


@pytest.mark.parametrize("args", [["--help"], ["add", "--help"], ["search", "--help"]])
def test_help_loads_no_store_gate_or_model(args: list[str]) -> None:
    modules = loaded(*args)
    assert "memstore.cli.reads" in modules  # every command was registered
    assert among(modules, MODEL + STORAGE + PARTS) == []


@pytest.mark.parametrize("command", ["stats", "get", "audit"])
def test_a_read_loads_the_store_but_no_verifier_or_embedder(
    small_store: tuple[Path, str], command: str
) -> None:
    where, fact_id = small_store
    modules = loaded(command, *([fact_id] if command == "get" else []), store=where)
    assert "memstore.store" in modules and "sqlalchemy" in modules
    # nor alembic (a store at the schema's head needs no migration), networkx (no graph
    # is read) or numpy and Arrow (no index is opened)
    heavy = ("lancedb", "alembic", "networkx", "numpy", "pyarrow")
    assert among(modules, (*MODEL, *heavy)) == []


def test_search_loads_the_embedder_on_onnxruntime_without_torch(tmp_path: Path) -> None:
    where = tmp_path / "mem"
    with memstore.open(str(where), NS) as store:
        store.add_fact(
            statement="Alice is allergic to peanuts.",
            members=[{"name": "Alice", "kind": "person"}],
            evidence=[{"text": "Alice: I'm allergic to peanuts."}],
            ungated=True,
        )
        store.sync_index()
    assert shared_encoder().runtime == "onnx"
    # The graph in the cache the command will read, whatever made this process's encoder
    # (another test, under another cache, in whatever order the tests ran): exported here
    # if missing, so the command itself never exports it (which would import torch).
    OnnxMiniLM(minilm_path(), cache_dir())
    modules = loaded(
        "search", "peanuts", "--json", store=where, MEMSTORE_CACHE_DIR=str(cache_dir())
    )
    assert among(modules, (*MODEL, "lancedb", "onnxruntime")) == [
        "gate.backends.embedded",
        "lancedb",
        "onnxruntime",
    ]
    assert "lance_namespace_urllib3_client.models" in modules  # lancedb's import needs them
    assert among(modules, (REST_CLIENT,)) == []  # but not LanceDB's REST client


#: The part of ``import lancedb`` that memstore defers (``memstore.index.lancedb_import``).
REST_CLIENT = "lance_namespace_urllib3_client.api"

#: Imports LanceDB as memstore does, then reads the REST client as its users would.
LANCEDB_PROBE = """
import json, sys
from memstore.index.lancedb_import import import_lancedb
lancedb = import_lancedb()
before = sorted(sys.modules)
import lance_namespace_urllib3_client as client
from lance_namespace_urllib3_client import ApiClient, TableApi
print(json.dumps({"before": before, "after": sorted(sys.modules),
                  "same": client.ApiClient is ApiClient, "api": TableApi.__module__}))
"""


def test_lancedb_imports_without_its_rest_client_which_loads_whole_when_read() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LANCEDB_PROBE], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert "lancedb" in found["before"]
    assert among(set(found["before"]), (REST_CLIENT,)) == []
    assert REST_CLIENT in found["after"] and found["same"] is True
    assert found["api"] == REST_CLIENT + ".table_api"


#: Imports LanceDB as memstore does, counting the checks ``overrides`` makes.
OVERRIDES_PROBE = """
import json
import overrides
import importlib
checks = importlib.import_module("overrides.overrides")
real, find = overrides.override, checks._get_base_classes
looked = []
checks._get_base_classes = lambda *a: (looked.append(1), find(*a))[1]
from memstore.index.lancedb_import import import_lancedb
lancedb = import_lancedb()
class Base:
    def read(self): return 1
class Child(Base):
    @overrides.override
    def read(self): return 2
print(json.dumps({"during_import": len(looked) - 1, "restored": overrides.override is real,
                  "marked": lancedb.db.LanceDBConnection.open_table.__override__}))
"""


def test_lancedb_imports_without_the_checks_of_its_override_decorators() -> None:
    """They cost 0.2-0.4 s of the import; the decorator is whole again after it."""
    done = subprocess.run(
        [sys.executable, "-c", OVERRIDES_PROBE], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found == {"during_import": 0, "restored": True, "marked": True}


#: One thread imports LanceDB; once the import has begun, another asks for it too.
LANCEDB_RACE_PROBE = """
import json, sys, threading, time
from memstore.index.lancedb_import import import_lancedb
first = threading.Thread(target=import_lancedb)
first.start()
while "lancedb" not in sys.modules:
    time.sleep(0.001)
whole = hasattr(import_lancedb(), "connect")  # read before the first thread is done
first.join()
print(json.dumps({"connect": whole}))
"""


def test_lancedb_asked_for_during_its_import_is_whole() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LANCEDB_RACE_PROBE], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"connect": True}


#: Counts the encoders made while ``preload``'s thread and the main thread both ask for
#: the shared one (the main thread while the thread loads it).
BOTH_ASK = """
import threading
from gate.backends.embedded import backend
made = []
make = backend.Encoder.__init__
backend.Encoder.__init__ = lambda self, *a, **k: (made.append(1), make(self, *a, **k))[1]
from memstore.index.embeddings import preload
preload()
encoder = backend.shared_encoder()
[thread] = [t for t in threading.enumerate() if t.name == "memstore-embedder-load"] or [None]
if thread is not None:
    thread.join()
print(len(made), backend.shared_encoder() is encoder)
"""


def test_a_search_waits_for_the_model_its_preload_is_loading_instead_of_loading_another() -> None:
    shared_encoder()  # the graph is exported (once) by now
    done = subprocess.run(
        [sys.executable, "-c", BOTH_ASK],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ | {"MEMSTORE_CACHE_DIR": str(cache_dir())},
    )
    assert done.stdout.split() == ["1", "True"], done.stdout + done.stderr
