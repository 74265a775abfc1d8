"""The packaged MiniLM on onnxruntime: the default runtime; in float32 (the default) the
same vectors as sentence-transformers, in int8 close to them and the same for a text
whatever it is embedded with; built once into the cache, and torch when ONNX cannot
load."""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from gate.backends.embedded.backend import (
    ALIKE,
    Encoder,
    RecentVectors,
    minilm_path,
    shared_encoder,
)
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


def test_the_shared_encoder_runs_float32_and_int8_when_asked() -> None:
    encoder = shared_encoder()
    assert encoder.precision == "float32" and encoder is shared_encoder("float32")
    int8 = shared_encoder("int8")
    assert int8.precision == "int8" and int8 is not encoder
    assert int8._onnx is not None and int8._onnx.path.name.endswith("-int8.onnx")


def test_onnx_in_float32_gives_the_vectors_sentence_transformers_gives() -> None:
    torch_side = Encoder(runtime="torch", precision="float32").encode(TEXTS)
    onnx_side = shared_encoder("float32").encode(TEXTS)
    assert set(onnx_side) == set(torch_side)
    for text, vector in torch_side.items():
        np.testing.assert_allclose(onnx_side[text], vector, atol=1e-5, err_msg=text[:40])
        assert np.linalg.norm(onnx_side[text]) == pytest.approx(1.0, abs=1e-5)


def test_int8_vectors_are_close_to_the_float32_ones() -> None:
    """Measured on 800 synthetic statements and evidence texts: cosine 0.986 at least,
    0.992 on average (bench/README.md, Measurements behind docs/design.md)."""
    int8, float32 = shared_encoder("int8").encode(TEXTS), shared_encoder("float32").encode(TEXTS)
    similarity = {text: float(int8[text] @ float32[text]) for text in TEXTS}
    assert min(similarity.values()) > 0.97, similarity
    assert all(np.linalg.norm(int8[t]) == pytest.approx(1.0, abs=1e-5) for t in TEXTS)
    # and not the float32 graph's own: quantized, they differ
    assert max(similarity.values()) < 0.9999


@pytest.mark.parametrize("precision", ["int8", "float32"])
def test_one_text_alone_embeds_as_in_a_batch(precision: str) -> None:
    """In int8 each text runs alone (a batch's activations would share one quantization
    scale): a verifier's score of a claim cannot depend on what came with it."""
    encoder = Encoder(recent=0, precision=precision)  # every call embeds
    batch = encoder.encode(TEXTS)
    assert len(encoder.recent) == 0
    for text in TEXTS[:5]:
        np.testing.assert_allclose(encoder.encode([text])[text], batch[text], atol=1e-5)
        beside_the_longest = encoder.encode([text, TEXTS[3]])[text]  # asked in one call
        np.testing.assert_allclose(beside_the_longest, batch[text], atol=1e-5)


def test_the_graphs_are_built_once_into_the_cache(tmp_path: Path) -> None:
    first = OnnxMiniLM(minilm_path(), cache=tmp_path, precision="int8")  # the export quantized
    exported = graph_path(minilm_path(), tmp_path)
    assert first.path == graph_path(minilm_path(), tmp_path, "int8") != exported
    assert first.path.exists() and exported.exists()
    for path in (first.path, exported):  # readable by others, as plain files
        assert path.stat().st_mode & 0o777 == 0o644
    stamps = {path: path.stat().st_mtime_ns for path in (first.path, exported)}
    second = OnnxMiniLM(minilm_path(), cache=tmp_path, precision="int8")
    as_float = OnnxMiniLM(minilm_path(), cache=tmp_path)
    assert as_float.path == exported
    assert {path: path.stat().st_mtime_ns for path in stamps} == stamps
    # the two graphs and the weights' digest, no leftovers of the quantization
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted([first.path.name, exported.name, names[2]])
    assert names[2].startswith("weights-")
    np.testing.assert_allclose(second.encode(["x y"]), first.encode(["x y"]), atol=1e-6)
    assert float(as_float.encode(["x y"])[0] @ first.encode(["x y"])[0]) > 0.97


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


@pytest.mark.parametrize(
    ("precision", "damaged"),
    [("float32", "float32"), ("int8", "float32"), ("int8", "int8")],
)
def test_a_damaged_cached_graph_is_built_again(
    tmp_path: Path, precision: str, damaged: str
) -> None:
    """The exported graph damaged before its quantized copy was made, or either damaged
    once both were: the load builds what it needs again."""
    if damaged == "int8":
        OnnxMiniLM(minilm_path(), cache=tmp_path, precision="int8")  # both graphs, whole
    path = graph_path(minilm_path(), tmp_path, damaged)
    path.write_bytes(b"not an onnx graph")
    encoder = OnnxMiniLM(minilm_path(), cache=tmp_path, precision=precision)
    assert path.stat().st_size > 1_000_000
    expected = shared_encoder(precision).encode(["peanuts"])["peanuts"]
    np.testing.assert_allclose(encoder.encode(["peanuts"])[0], expected, atol=1e-5)


def test_without_a_usable_cache_the_encoder_runs_on_torch_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(blocker / "cache"))  # cannot be made
    with caplog.at_level(logging.WARNING):
        encoder = Encoder(precision="int8")
    assert (encoder.runtime, encoder.precision) == ("torch", "float32")
    assert "runs on torch in float32" in caplog.text and "int8 ONNX graph failed" in caplog.text
    vector = encoder.encode(["peanuts"])["peanuts"]
    float32 = shared_encoder("float32").encode(["peanuts"])["peanuts"]
    np.testing.assert_allclose(vector, float32, atol=1e-5)
    with pytest.raises(NotADirectoryError):
        Encoder(runtime="onnx")


def test_the_torch_runtime_runs_float32_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        encoder = Encoder(runtime="torch", precision="int8")
    assert (encoder.runtime, encoder.precision) == ("torch", "float32")
    assert "MiniLM runs in float32, not int8: the torch runtime has no other" in caplog.text


def test_an_unknown_runtime_or_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="runtime must be auto, onnx or torch"):
        Encoder(runtime="tensorrt")
    with pytest.raises(ValueError, match="precision must be one of int8, float32, not 'int4'"):
        Encoder(precision="int4")


def test_a_turn_of_the_model_holds_texts_of_a_like_length() -> None:
    """A turn is padded to its longest text: a JSON line and a few words are run apart,
    and no text is left out or run twice."""
    encoder = shared_encoder()
    record = 'orders: {"order_id": "88213", "item": "Standing desk, oak", "status": "shipped"}'
    short = [f"Fact {i} is true." for i in range(20)]
    texts = [record, "Priya: It never arrived.", "Thanks!", *short]
    turns = encoder._turns(texts)
    assert sorted(t for turn in turns for t in turn) == sorted(texts)
    assert [record] in turns
    for turn in turns:
        lengths = encoder._onnx.lengths(turn)
        assert len(turn) <= encoder.turn
        assert min(lengths) >= ALIKE * max(lengths), turn


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
