"""The issue-23 verifier pipeline (training/): the mix, chunked training and resuming, export."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from grounding_files import write_fixture

from gate.backends.crossencoder import CrossEncoderBackend
from training import datasets, verifier
from training import mix as mixing

REAL_DATA = mixing.NLI_PAIRS.is_file() and datasets.default_data_dir().is_dir()
needs_data = pytest.mark.skipif(not REAL_DATA, reason="../shared/data is not here")


def _ids(path: Path) -> set[str]:
    """The ids of a split file (nothing else of its rows is looked at)."""
    with path.open(encoding="utf-8") as fh:
        return {json.loads(line)["id"] for line in fh if line.strip()}


@pytest.fixture(scope="module")
def real_mix() -> mixing.Mix:
    return mixing.build(mixing.MixConfig(), quiet=True)


@needs_data
def test_the_mix_never_holds_agent_memory_test_or_grounding_check_rows(
    real_mix: mixing.Mix,
) -> None:
    rows = {p.row for p in real_mix.pairs}
    test_ids = _ids(mixing.AGENT_MEMORY / "test.jsonl")
    dev_ids = _ids(mixing.AGENT_MEMORY / "dev.jsonl")
    train_ids = _ids(mixing.AGENT_MEMORY / "train.jsonl")
    assert test_ids and not {f"am/{i}" for i in test_ids} & rows
    assert not {f"am/{i}" for i in dev_ids} & rows  # dev chooses checkpoints
    assert {f"am/{i}" for i in train_ids} <= rows  # every train pair is in
    check = {mixing.grounding_id(r) for r in datasets.load(split="check")}
    held_out = {mixing.grounding_id(r) for r in real_mix.grounding_dev}
    assert check and not check & rows
    assert held_out and not held_out & rows
    in_mix = {r for r in rows if r.startswith("grounding/")}
    assert in_mix  # and every one of them is a fit row
    fit = {mixing.grounding_id(r) for r in datasets.load(split="fit")}
    assert in_mix <= fit
    # The dev sets are dev rows only.
    assert {r.id for r in real_mix.am_dev} == dev_ids
    assert all(r.split == "fit" for r in real_mix.grounding_dev)
    with pytest.raises(ValueError, match="test"):
        mixing.load_agent_memory("test")


@needs_data
def test_the_mix_is_balanced_as_designed(real_mix: mixing.Mix) -> None:
    summary = real_mix.summary()
    assert set(summary["components"]) == {"nli", "nli-hard", "am", "am-hard", "grounding"}
    for name, c in summary["components"].items():
        assert abs(c["supported"] / c["pairs"] - 0.5) < 0.01, name
    labels = Counter(p.label for p in real_mix.pairs)
    assert abs(labels[1] / len(real_mix.pairs) - 0.5) < 0.01
    # NLI: per source, as many supported rows as not (the larger class subsampled).
    nli: dict[str, Counter[int]] = defaultdict(Counter)
    for row, label in {(p.row, p.label) for p in real_mix.pairs if p.source == "nli"}:
        nli[row.split("/")[1]][label] += 1
    assert len(nli) == 6
    assert all(c[0] == c[1] > 0 for c in nli.values()), nli
    # Agent-memory train pairs are repeated (upweighted); hard negatives sit next to
    # the supported pair they were made from.
    am = Counter(p.row for p in real_mix.pairs if p.source in ("am", "am-generated"))
    assert min(am.values()) >= real_mix.config.am_repeat
    hard = [p for p in real_mix.pairs if p.source.startswith("am-hard")]
    assert {p.row for p in hard if p.label == 0} == {p.row for p in hard if p.label == 1}


@needs_data
def test_the_mix_is_deterministic_for_a_seed() -> None:
    small = mixing.MixConfig(nli_per_class=150, nli_hard=100, am_repeat=1, am_hard_repeat=1)
    first = mixing.build(small, quiet=True)
    again = mixing.build(small, quiet=True)
    other = mixing.build(dataclasses.replace(small, seed=7), quiet=True)
    assert first.pairs == again.pairs
    assert first.summary()["digest"] == again.summary()["digest"]
    assert first.summary()["digest"] != other.summary()["digest"]


# --------------------------------------------------------------------- training


def _am_row(i: int, claim: str, evidence: str, label: int, quote: str | None = None) -> str:
    return json.dumps(
        {
            "id": f"am-9{i:02d}-c1",
            "scenario": f"am-9{i:02d}",
            "kind": "chat_first_person",
            "phenomenon": "paraphrase" if label else "wrong_object",
            "claim": claim,
            "evidence": [evidence],
            "label": label,
            "quote": quote,
            "generated_from": None,
        }
    )


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Command-line data flags for a miniature copy of the three sources."""
    root = tmp_path_factory.mktemp("data")
    grounding = write_fixture(root / "grounding")
    nli = root / "pairs.jsonl"
    with nli.open("w") as fh:
        for i in range(4):
            for source in ("snli_like", "fever_like"):
                fh.write(
                    json.dumps(
                        {
                            "source": source,
                            "evidence": f"A man with {i + 2} dogs walks in the park on Monday.",
                            "claim": f"A man walks {i + 2} dogs." if i % 2 else "A cat sleeps.",
                            "label": "supported" if i % 2 else "not_supported",
                        }
                    )
                    + "\n"
                )
    am = root / "agent_memory"
    am.mkdir()
    said = "User: I moved to Porto in 2019 and I work at Globex as a nurse."
    (am / "train.jsonl").write_text(
        "\n".join(
            [
                _am_row(1, "The user lives in Porto.", said, 1, "I moved to Porto"),
                _am_row(2, "The user works at Globex.", said, 1, "I work at Globex"),
                _am_row(3, "The user is a teacher.", said, 0),
                _am_row(4, "The user moved to Oslo.", said, 0),
            ]
        )
        + "\n"
    )
    (am / "dev.jsonl").write_text(
        "\n".join(
            [
                _am_row(5, "The user is a nurse.", said, 1, "as a nurse"),
                _am_row(6, "The user moved in 2019.", said, 1),
                _am_row(7, "The user works at Hooli.", said, 0),
                _am_row(8, "The user moved in 2015.", said, 0),
            ]
        )
        + "\n"
    )
    (am / "test.jsonl").write_text(_am_row(99, "Never to be read.", said, 1) + "\n")
    return [
        *("--nli", str(nli), "--grounding", str(grounding), "--agent-memory", str(am)),
        *("--batch", "2", "--max-length", "32", "--epochs", "1"),
        *("--am-repeat", "1", "--am-hard-repeat", "1", "--nli-hard", "2", "--log-every", "1"),
    ]


def _state(run: Path) -> dict[str, object]:
    import torch

    state: dict[str, object] = torch.load(run / verifier.STATE, weights_only=False)
    return state


def test_a_resumed_run_continues_where_it_stopped_and_exports_a_loadable_model(
    tmp_path: Path, tiny_data: list[str]
) -> None:
    import torch

    chunked, whole = tmp_path / "chunked", tmp_path / "whole"
    assert verifier.main(["--out", str(chunked), "--steps", "2", *tiny_data]) == 0
    assert _state(chunked)["step"] == 2
    assert verifier.main(["--out", str(chunked), "--done"]) == 1
    # Settings are fixed when a run starts.
    with pytest.raises(SystemExit, match="other settings"):
        verifier.main(["--out", str(chunked), "--steps", "2", *tiny_data, "--lr", "0.1"])
    assert verifier.main(["--out", str(chunked), "--steps", "2", *tiny_data]) == 0
    assert verifier.main(["--out", str(whole), "--steps", "4", *tiny_data]) == 0

    a, b = _state(chunked), _state(whole)
    assert a["step"] == b["step"] == 4
    for key, value in a["model"].items():  # type: ignore[attr-defined]
        assert torch.equal(value, b["model"][key]), key  # type: ignore[index]
    opt_a, opt_b = a["optimizer"]["state"], b["optimizer"]["state"]  # type: ignore[index]
    for key in opt_a:
        for name in ("exp_avg", "exp_avg_sq"):
            assert torch.equal(opt_a[key][name], opt_b[key][name])
    assert a["scheduler"] == b["scheduler"]

    log = json.loads((chunked / verifier.LOG).read_text())
    assert [r["steps"] for r in log] == [[0, 2], [2, 4]]
    assert all(r["pairs_per_second"] > 0 and "agent_memory" in r["dev"] for r in log)
    assert (chunked / verifier.BEST).is_file() and (chunked / verifier.MIX).is_file()
    run = json.loads((chunked / verifier.RUN).read_text())
    assert run["hyper"]["max_length"] == 32 and run["mix"]["pairs"] >= 8

    model_dir = tmp_path / "model"
    assert verifier.main(["--out", str(chunked), "--export", str(model_dir)]) == 0
    card = json.loads((model_dir / "verifier.json").read_text())
    assert card["max_length"] == 32 and card["calibrated_on"].startswith("agent-memory dev")
    assert card["training"]["mix"]["components"] and card["training"]["minutes"] >= 0
    backend = CrossEncoderBackend(path=model_dir)
    said = "[1] User: I moved to Porto in 2019 and I work at Globex as a nurse."
    probs = backend.estimate_many(
        [("The user lives in Porto.", said), ("The user is a pilot.", "")]
    )
    assert all(0.0 <= p <= 1.0 for p in probs)
    backend.close()
