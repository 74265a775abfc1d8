"""The packaged MiniLM on onnxruntime: the default runtime, the same vectors as
sentence-transformers, exported once into the cache, and torch when ONNX cannot load."""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from gate.backends.embedded.backend import Encoder, RecentVectors, minilm_path, shared_encoder
from gate.backends.embedded.onnx_minilm import OnnxMiniLM, graph_path

TEXTS = [
    "The user is allergic to peanuts.",
    "",
    "Ünïcödé, ∑ and an emoji 😀 in one memory",
    "word " * 400,  # past the model's 256 tokens: truncated alike
    *(f"fact {i}: Alice met Bob in city number {i * 7}" for i in range(20)),
]


def test_the_shared_encoder_runs_on_onnx() -> None:
    assert shared_encoder().runtime == "onnx"


def test_the_onnx_threads_do_not_spin_after_a_run() -> None:
    """Spinning threads would take the cores from the index's queries after a search's
    embedding (bench/results: search latency at 100,000 facts)."""
    encoder = shared_encoder()
    assert encoder._onnx is not None
    options = encoder._onnx._session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_onnx_gives_the_vectors_sentence_transformers_gives() -> None:
    torch_side = Encoder(runtime="torch").encode(TEXTS)
    onnx_side = shared_encoder().encode(TEXTS)
    assert set(onnx_side) == set(torch_side)
    for text, vector in torch_side.items():
        np.testing.assert_allclose(onnx_side[text], vector, atol=1e-5, err_msg=text[:40])
        assert np.linalg.norm(onnx_side[text]) == pytest.approx(1.0, abs=1e-5)


def test_one_text_alone_embeds_as_in_a_batch() -> None:
    encoder = Encoder(recent=0)  # every call embeds
    batch = encoder.encode(TEXTS)
    assert len(encoder.recent) == 0
    for text in TEXTS[:4]:
        np.testing.assert_allclose(encoder.encode([text])[text], batch[text], atol=1e-5)


def test_the_graph_is_exported_once_into_the_cache(tmp_path: Path) -> None:
    first = OnnxMiniLM(minilm_path(), cache=tmp_path)
    assert first.path == graph_path(minilm_path(), tmp_path) and first.path.exists()
    assert first.path.stat().st_mode & 0o777 == 0o644  # readable by others, as a plain file
    stamp = first.path.stat().st_mtime_ns
    second = OnnxMiniLM(minilm_path(), cache=tmp_path)
    assert second.path.stat().st_mtime_ns == stamp
    names = sorted(p.name for p in tmp_path.iterdir())  # the graph and the weights' digest
    assert len(names) == 2 and first.path.name in names and names[1].startswith("weights-")
    np.testing.assert_allclose(second.encode(["x y"]), first.encode(["x y"]), atol=1e-6)


def test_the_weights_are_hashed_again_only_when_their_file_changes(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(minilm_path(), model)
    cache = tmp_path / "cache"
    named = graph_path(model, cache)
    [stamp] = cache.glob("weights-*.json")
    assert named == graph_path(minilm_path(), cache)  # the same weights, the same graph
    kept = json.loads(stamp.read_text())
    # A digest the weights could not have: only a load that trusts the stamp names it.
    stamp.write_text(json.dumps({**kept, "digest": "f" * 64}))
    assert graph_path(model, cache).name == f"minilm-{'f' * 16}.onnx"
    weights = model / "model.safetensors"
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    assert graph_path(model, cache) == named  # changed on disk: hashed again
    stamp.write_text("{not json")
    assert graph_path(model, cache) == named
    assert json.loads(stamp.read_text())["digest"] == kept["digest"]


def test_a_damaged_cached_graph_is_exported_again(tmp_path: Path) -> None:
    path = graph_path(minilm_path(), tmp_path)
    path.write_bytes(b"not an onnx graph")
    encoder = OnnxMiniLM(minilm_path(), cache=tmp_path)
    assert path.stat().st_size > 1_000_000
    expected = shared_encoder().encode(["peanuts"])["peanuts"]
    np.testing.assert_allclose(encoder.encode(["peanuts"])[0], expected, atol=1e-5)


def test_without_a_usable_cache_the_encoder_runs_on_torch_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(blocker / "cache"))  # cannot be made
    with caplog.at_level(logging.WARNING):
        encoder = Encoder()
    assert encoder.runtime == "torch"
    assert "runs on torch" in caplog.text
    vector = encoder.encode(["peanuts"])["peanuts"]
    np.testing.assert_allclose(vector, shared_encoder().encode(["peanuts"])["peanuts"], atol=1e-5)
    with pytest.raises(NotADirectoryError):
        Encoder(runtime="onnx")


def test_an_unknown_runtime_is_refused() -> None:
    with pytest.raises(ValueError, match="runtime must be auto, onnx or torch"):
        Encoder(runtime="tensorrt")


def test_recent_texts_are_not_embedded_again() -> None:
    encoder = Encoder()
    first = encoder.encode(TEXTS)
    kept = encoder.recent.get_many(TEXTS)
    assert set(kept) == set(TEXTS)  # "word " * 400 is 2,000 characters: still kept
    again = encoder.encode([TEXTS[0], "a new text"])
    assert again[TEXTS[0]] is kept[TEXTS[0]]
    np.testing.assert_allclose(kept[TEXTS[0]], first[TEXTS[0]], atol=0)
    np.testing.assert_allclose(
        again["a new text"], Encoder(recent=0).encode(["a new text"])["a new text"], atol=1e-5
    )
    assert not kept[TEXTS[0]].flags.writeable  # a caller cannot change what others get


def test_recent_vectors_keep_the_most_recently_used_and_no_long_texts() -> None:
    recent = RecentVectors(size=2, max_chars=5)
    given = np.ones(3, dtype=np.float32)
    recent.put_many({"a": given, "b": given * 2, "toolong": given * 3})
    given[:] = 9  # kept vectors are copies
    assert recent.get_many(["a", "toolong"])["a"].tolist() == [1, 1, 1]  # "a" now the newest
    recent.put_many({"c": given})
    assert sorted(recent.get_many(["a", "b", "c"])) == ["a", "c"]  # "b" was the oldest
    assert len(recent) == 2
