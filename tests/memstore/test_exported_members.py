"""Each package's __all__ matches its public names (httpx's test_exported_members)."""

import importlib
import types

import pytest


@pytest.mark.parametrize("package", ["memstore", "gate", "hypergraph", "language"])
def test_all_lists_exactly_the_public_names(package: str) -> None:
    module = importlib.import_module(package)
    exported = set(module.__all__)
    public = {  # dir() and getattr(): a package may load its names on first use
        name
        for name in dir(module)
        if not name.startswith("_")
        and not isinstance(value := getattr(module, name), types.ModuleType)
        and getattr(value, "__module__", package).split(".")[0] == package
    }
    assert exported == public
    assert module.__all__ == sorted(module.__all__)


def test_gate_and_hypergraph_do_not_import_memstore_or_each_other() -> None:
    import subprocess
    import sys

    code = (
        "import sys, gate, hypergraph; "
        "bad = [m for m in sys.modules if m.split('.')[0] == 'memstore']; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
    for package, other in (("gate", "hypergraph"), ("hypergraph", "gate")):
        code = f"import sys, {package}; sys.exit(1 if '{other}' in sys.modules else 0)"
        assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_language_imports_none_of_the_other_packages() -> None:
    """The language layer is read by the gate and the store, and reads neither."""
    import subprocess
    import sys

    code = (
        "import sys, language; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('memstore', 'gate', 'hypergraph')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
