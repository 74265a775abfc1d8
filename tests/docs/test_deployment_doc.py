"""docs/deployment.md and its Compose file cannot drift from the code: every
``MEMSTORE_*`` variable the Compose file sets (values from ``env.example``) loads
through :func:`memstore.config.load_settings` into the setting it names, the verifier
options build the backend, each memstore service's command parses with the real CLI,
and every ``MEMSTORE_*`` name the guide mentions is a real setting."""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from pydantic import BaseModel, SecretStr

import memstore.cli  # noqa: F401  (registers every command on the app)
from gate import create_backend
from memstore.cli.program import app
from memstore.config import ENV_PREFIX, Settings, load_settings, parse_duration

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "docs" / "deploy"
GUIDE = ROOT / "docs" / "deployment.md"
#: Services built from the memstore image (the others run postgres, weed, llama.cpp).
MEMSTORE_SERVICES = ("agent", "index-worker", "reverify")


def example_env() -> dict[str, str]:
    """``env.example``'s ``NAME=value`` lines."""
    lines = (DEPLOY / "env.example").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ``${NAME}``, ``${NAME:?message}`` and ``$$``, from ``env``."""
    filled = re.sub(r"\$\{(\w+)[^}]*\}", lambda m: env[m.group(1)], value.replace("$$", "\0"))
    return filled.replace("\0", "$")


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def service_env(service: str) -> dict[str, str]:
    """The ``MEMSTORE_*`` environment of a Compose service, interpolated."""
    raw = compose()["services"][service].get("environment", {})
    env = example_env()
    return {k: interpolate(str(v), env) for k, v in raw.items() if k.startswith(ENV_PREFIX)}


def field_path(name: str) -> list[str]:
    """``MEMSTORE_STORE__OBJECT_STORE__ENDPOINT`` -> ``["store", "object_store",
    "endpoint"]``, each step checked against the settings' models."""
    path = name.removeprefix(ENV_PREFIX).lower().split("__")
    model: type[BaseModel] = Settings
    for i, step in enumerate(path):
        assert step in model.model_fields, f"{name}: {'.'.join(path[: i + 1])} is no setting"
        annotation = model.model_fields[step].annotation
        if i < len(path) - 1:
            assert isinstance(annotation, type) and issubclass(annotation, BaseModel), (
                f"{name}: {'.'.join(path[: i + 1])} has no fields below it"
            )
            model = annotation
    return path


def loaded_value(settings: Settings, path: list[str]) -> Any:
    value: Any = settings
    for step in path:
        value = getattr(value, step)
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def as_loaded(text: str, like: Any) -> Any:
    """The environment string ``text`` as the settings hold it (the type of ``like``)."""
    if isinstance(like, bool):
        return text.strip().lower() == "true"
    if isinstance(like, timedelta):
        return parse_duration(text)
    if isinstance(like, int | float):
        return type(like)(text)
    if isinstance(like, dict | list):
        return json.loads(text)
    return text


def test_the_compose_file_has_every_part_of_the_deployment() -> None:
    services = compose()["services"]
    assert set(services) >= {"postgres", "seaweedfs", "verifier", *MEMSTORE_SERVICES}
    assert services["seaweedfs"]["image"].startswith("chrislusf/seaweedfs")
    assert services["agent"]["command"] == ["serve"]
    assert services["reverify"]["command"][:2] == ["reverify", "--watch"]


@pytest.mark.parametrize("service", MEMSTORE_SERVICES)
def test_every_memstore_variable_reaches_the_setting_it_names(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    variables = service_env(service)
    assert "MEMSTORE_STORE__OBJECT_STORE__ENDPOINT" in variables
    paths = {name: field_path(name) for name in variables}
    monkeypatch.delenv("MEMSTORE_CONFIG", raising=False)
    for name in [n for n in os.environ if n.startswith(ENV_PREFIX)]:
        monkeypatch.delenv(name)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    for name, path in paths.items():
        held = loaded_value(settings, path)
        assert held == as_loaded(variables[name], held), name
    assert settings.store.index == "s3://memstore/index"
    gate = settings.hallucination
    assert create_backend(gate.backend, **gate.backend_options).name == "openai"


@pytest.mark.parametrize("service", MEMSTORE_SERVICES)
def test_each_memstore_command_parses(service: str) -> None:
    """The entrypoint is ``memstore``: the command's words parse with the real CLI."""
    words = compose()["services"][service]["command"]
    command = typer.main.get_group(app).commands.get(words[0])
    assert command is not None, f"memstore has no command {words[0]!r}"
    command.make_context(words[0], list(words[1:]))  # raises on an unknown option or value


def test_the_guide_names_only_real_settings_and_the_compose_file() -> None:
    guide = GUIDE.read_text()
    names = set(re.findall(r"\bMEMSTORE_[A-Z_]*[A-Z]", guide))
    assert names, "docs/deployment.md names no MEMSTORE_* setting"
    short = {"MEMSTORE_CONFIG", "MEMSTORE_URL", "MEMSTORE_NAMESPACE", "MEMSTORE_INDEX_URI"}
    for name in sorted(names - short):
        field_path(name)
    assert "deploy/compose.yaml" in guide
    for service in compose()["services"]:
        assert f"`{service}`" in guide, f"docs/deployment.md does not explain {service}"
