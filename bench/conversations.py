"""Memory from conversations, measured (issue 27, goal 7): ``data/conversations/`` through
``Store.remember_conversation`` with each extractor, into a fresh store with the default
gate and settings per conversation.

    python bench/conversations.py                      # embedded, then llm (starts llama.cpp)
    python bench/conversations.py --extractor embedded --only 01-assistant-move
    python bench/conversations.py --extractor llm --server http://127.0.0.1:8765/v1

Each conversation runs twice, each time into a fresh store:

1. **as is**: one ``remember_conversation`` call with every message, timed. Then, by the
   matching rule of ``conversation_data``: the share of expected memories (those no
   correction replaces) that an active fact matches (recall), split by the role of the
   turn they come from; how each missed one was lost (never extracted, refused by the
   gate, or stored and then replaced); the corrections reconciled (the old memory was
   stored, is active no more, and the new one is); active facts that match no expected
   memory; each question through ``Store.search`` (hit@1 and hit@5: an active fact that
   matches the expected answer among the first 1 or 5) and ``Store.recall`` (the answer
   among the memories its block shows; or, where no memory reached its threshold, the
   answer's turn among the turns it quotes).
2. **with the traps**: the same candidates replayed (the extractor is not asked again)
   with each trap inserted before the first candidate from a later turn, so the gate
   reads the trap against the turn it claims and the store as it was then. A trap counts
   as refused when its outcome is ``refused``.

Latency is the first run's, after a warm-up conversation (``WARM_UP``: models loaded,
the extractor's first request served): per conversation (the call's wall time) and per
message (that time over the conversation's messages: one sample per conversation), with
the share spent in the extractor. The llm extractor runs against a llama.cpp server this
script starts (``gate.backends.llama_server``, SmolLM2-135M) unless ``--server`` names one.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conversation_data import MIN_SIMILARITY, Conversation, Expected, Matcher, Trap, load
from measure import RESULTS, forget_embeddings, percentiles, provenance, save

import memstore
from gate import Gate
from memstore.conversations import (
    Candidate,
    EmbeddedExtractor,
    Extractor,
    ExtractorError,
    LLMExtractor,
    Message,
)
from memstore.conversations.conversation import ConversationReport
from memstore.schemas import FactPublic
from memstore.storage.tables import ACTIVE_STATUSES

OUT = RESULTS / "conversations.json"
EXTRACTORS = ("embedded", "llm")
#: Search hits read per question.
SEARCH_K = 5
#: The llama.cpp server's context: the prompt, a 30-turn conversation and 1,024 tokens out.
N_CTX = 4096


class Recording:
    """Runs an extractor and keeps what it proposed and how long it took."""

    def __init__(self, inner: Extractor) -> None:
        self.inner = inner
        self.name = inner.name
        self.candidates: list[Candidate] = []
        self.seconds = 0.0
        #: Why the extractor dropped facts of its answer, or the whole answer (llm).
        self.dropped: list[str] = []

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        began = time.perf_counter()
        try:
            self.candidates = self.inner.extract(messages)
        finally:
            self.seconds = time.perf_counter() - began
            self.dropped = list(getattr(self.inner, "last_errors", []))
        return self.candidates


class Replay:
    """Proposes the given candidates again (the second run: with the traps)."""

    def __init__(self, name: str, candidates: Sequence[Candidate]) -> None:
        self.name = name
        self.candidates = list(candidates)

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        return list(self.candidates)


def trap_candidate(trap: Trap) -> Candidate:
    members = tuple((m.name, m.kind, m.role) for m in trap.members)
    return Candidate(trap.statement, members, trap.turn, trap.quote, trap.relation)


def with_traps(
    candidates: Sequence[Candidate], traps: Sequence[Trap]
) -> tuple[list[Candidate], list[int]]:
    """The candidates in the extractor's order with each trap (in turn order) before the
    first candidate from a later turn, and where each trap went."""
    pending = sorted(range(len(traps)), key=lambda i: traps[i].turn)
    merged: list[Candidate] = []
    positions = [0] * len(traps)

    def put(i: int) -> None:
        positions[i] = len(merged)
        merged.append(trap_candidate(traps[i]))

    for candidate in candidates:
        while pending and traps[pending[0]].turn < candidate.message:
            put(pending.pop(0))
        merged.append(candidate)
    for i in pending:
        put(i)
    return merged, positions


@dataclass
class Run:
    """One ``remember_conversation`` call and the store it wrote to."""

    report: ConversationReport | None
    seconds: float
    extract_seconds: float
    candidates: list[Candidate] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    error: str | None = None


def remember(store: memstore.Store, conv: Conversation, extractor: Extractor) -> Run:
    recording = Recording(extractor)
    messages = [m.model_dump(exclude_none=True) for m in conv.messages]
    began = time.perf_counter()
    try:
        report = store.remember_conversation(messages, extractor=recording)
    except ExtractorError as exc:
        seconds = time.perf_counter() - began
        return Run(None, seconds, recording.seconds, error=str(exc)[:300])
    seconds = time.perf_counter() - began
    return Run(report, seconds, recording.seconds, recording.candidates, recording.dropped)


def _names(fact: FactPublic) -> list[str]:
    return [m.name for m in fact.members]


def _active(fact: FactPublic) -> bool:
    return fact.status in ACTIVE_STATUSES


def written_facts(store: memstore.Store, report: ConversationReport | None) -> list[FactPublic]:
    """Every fact the call wrote or replaced, as it stands now."""
    if report is None:
        return []
    ids = [c.fact.id for c in report.candidates if c.fact is not None]
    ids += [i for c in report.candidates for i in (*c.replaced, *c.conflicts)]
    return [store.get_fact(i) for i in dict.fromkeys(ids)]


def score(store: memstore.Store, conv: Conversation, run: Run, matcher: Matcher) -> dict[str, Any]:
    """The first run's measures for one conversation (see the module)."""
    facts = written_facts(store, run.report)
    active = [f for f in facts if _active(f)]
    outcomes = run.report.candidates if run.report else []

    def found(e: Expected, among: Sequence[FactPublic]) -> list[FactPublic]:
        return [f for f in among if matcher.matches(e, f.statement, _names(f))]

    expected = {}
    for e in conv.current:
        if found(e, active):
            state = "remembered"
        elif found(e, facts):
            state = "replaced"
        elif any(
            c.outcome == "refused" and matcher.matches(e, c.statement, [m.name for m in c.members])
            for c in outcomes
        ):
            state = "refused"
        else:
            state = "missed"
        expected[e.id] = {"state": state, "role": conv.messages[e.turn].role}

    corrections = {}
    for c in conv.corrections:
        old, new = conv.by_id[c.old], conv.by_id[c.new]
        new_active, old_all = found(new, active), found(old, facts)
        if not new_active:
            state = "new_missing"
        elif not old_all:
            state = "old_never_stored"
        elif any(_active(f) for f in old_all):
            state = "old_still_active"
        else:
            state = "reconciled"
        chained = state == "reconciled" and any(
            o.id in {h.id for h in store.history(n.id)} for n in new_active for o in old_all
        )
        corrections[f"{c.old}->{c.new}"] = {"state": state, "superseded_by_new": chained}

    questions = {}
    for q in conv.questions:
        answer = conv.by_id[q.answer]
        hits = store.search(q.query, k=SEARCH_K)
        ranks = [i for i, h in enumerate(hits) if found(answer, [h.fact])]
        row: dict[str, Any] = {"rank": ranks[0] + 1 if ranks else None}
        if hasattr(store, "recall"):
            recalled = store.recall(q.query)
            row["in_recall"] = any(found(answer, [h.fact]) for h in recalled.hits)
            said = " ".join(conv.messages[answer.turn].content.split())
            row["turn_in_recall"] = any(
                said[:60] in " ".join(t.text.split()) for t in recalled.turns
            )
        questions[q.query] = row

    unexpected = [
        f.statement
        for f in active
        if not any(matcher.matches(e, f.statement, _names(f)) for e in conv.expected)
    ]
    return {
        "id": conv.id,
        "messages": len(conv.messages),
        "error": run.error,
        "seconds": round(run.seconds, 3),
        "extract_seconds": round(run.extract_seconds, 3),
        "candidates": dict(Counter(c.outcome for c in outcomes)),
        "dropped_by_extractor": [why[:200] for why in run.dropped],
        "active_facts": len(active),
        "unexpected_active": unexpected,
        "expected": expected,
        "corrections": corrections,
        "questions": questions,
    }


def score_traps(
    report: ConversationReport, traps: Sequence[Trap], positions: Sequence[int]
) -> list[dict[str, Any]]:
    """Each trap's outcome in the second run: the outcome of the candidate put at its
    position, found by what it says and where (the store adds candidates of its own: the
    facts that corrections rewrite); "dropped" where the store wrote nothing for it (it
    came from a sentence read as a correction, which the rewrite replaces)."""
    unused = list(report.candidates)
    out = []
    for trap, _ in sorted(zip(traps, positions, strict=True), key=lambda pair: pair[1]):
        said = (trap.statement, trap.turn, trap.quote)
        at = next(
            (i for i, c in enumerate(unused) if (c.statement, c.message, c.quote) == said), None
        )
        outcome = "dropped" if at is None else _trap_outcome(unused[at])
        out.append({"kind": trap.kind, "statement": trap.statement, "outcome": outcome})
        if at is not None:
            del unused[: at + 1]
    return out


def _trap_outcome(candidate: Any) -> str:
    """refused, held (stored ``unverified``: never shown as verified) or stored (verified,
    or another outcome that wrote it)."""
    fact = candidate.fact if candidate.outcome != "refused" else None
    return "held" if fact is not None and fact.status == "unverified" else str(candidate.outcome)


def run_conversation(
    conv: Conversation,
    extractor: Extractor,
    workdir: Path,
    matcher: Matcher,
    gate: Gate | None = None,
) -> dict[str, Any]:
    """Both runs of one conversation, each into a fresh store under ``workdir``; the
    encoder forgets the texts of the runs before (another extractor's, say)."""
    forget_embeddings()
    with memstore.open(workdir / f"{conv.id}-{extractor.name}", gate=gate) as store:
        run = remember(store, conv, extractor)
        row = score(store, conv, run, matcher)
    merged, positions = with_traps(run.candidates, conv.traps)
    replay = Replay(extractor.name, merged)
    with memstore.open(workdir / f"{conv.id}-{extractor.name}-traps", gate=gate) as store:
        messages = [m.model_dump(exclude_none=True) for m in conv.messages]
        report = store.remember_conversation(messages, extractor=replay)
    row["traps"] = score_traps(report, conv.traps, positions)
    return row


#: Run once per extractor before the timed runs: loads the verifier, the embedder and the
#: index, and has the extractor's first request served.
WARM_UP = [
    {"role": "user", "name": "Noor", "content": "I live in Oslo and I work at Equinor."},
    {"role": "assistant", "content": "Noted, thanks."},
]


def warm_up(extractor: Extractor, workdir: Path, matcher: Matcher, gate: Gate | None) -> float:
    """Seconds to remember ``WARM_UP`` into a throwaway store (not part of the results)."""
    began = time.perf_counter()
    matcher.similarity("Noor lives in Oslo.", "Noor works at Equinor.")
    with memstore.open(workdir / f"warm-up-{extractor.name}", gate=gate) as store:
        store.remember_conversation(WARM_UP, extractor=extractor)
        store.search("Where does Noor live?", k=SEARCH_K)
    return round(time.perf_counter() - began, 1)


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The measures over all conversations, from ``run_conversation``'s rows."""
    expected = [e for r in rows for e in r["expected"].values()]
    states = Counter(e["state"] for e in expected)
    by_role = {}
    for role in sorted({e["role"] for e in expected}):
        mine = [e for e in expected if e["role"] == role]
        hit = sum(e["state"] == "remembered" for e in mine)
        by_role[role] = {"expected": len(mine), "remembered": hit, "recall": _share(hit, len(mine))}
    traps = [t for r in rows for t in r["traps"]]
    by_kind = {}
    for kind in sorted({t["kind"] for t in traps}):
        mine = [t for t in traps if t["kind"] == kind]
        outcomes = Counter(t["outcome"] for t in mine)
        by_kind[kind] = {
            "traps": len(mine),
            "share_refused": _share(outcomes["refused"], len(mine)),
            **dict(sorted(outcomes.items())),
        }
    corrections = [c for r in rows for c in r["corrections"].values()]
    reconciled = sum(c["state"] == "reconciled" for c in corrections)
    questions = [q for r in rows for q in r["questions"].values()]
    at1 = sum(q["rank"] == 1 for q in questions)
    at_k = sum(q["rank"] is not None for q in questions)
    recalled = sum(bool(q.get("in_recall")) for q in questions)
    quoted = sum(bool(q.get("in_recall") or q.get("turn_in_recall")) for q in questions)
    candidates: Counter[str] = Counter()
    for r in rows:
        candidates.update(r["candidates"])
    active = sum(r["active_facts"] for r in rows)
    unexpected = sum(len(r["unexpected_active"]) for r in rows)
    seconds = [r["seconds"] for r in rows]
    extract = sum(r["extract_seconds"] for r in rows)
    return {
        "conversations": len(rows),
        "messages": sum(r["messages"] for r in rows),
        "failed": [r["id"] for r in rows if r["error"]],
        "recall": _share(states["remembered"], len(expected)),
        "expected": {"total": len(expected), **dict(sorted(states.items())), "by_role": by_role},
        "traps_refused": _share(sum(t["outcome"] == "refused" for t in traps), len(traps)),
        # Refused or held: not stored as verified (issue 59's three outcomes); or not
        # written at all (dropped: read from a sentence that corrects a fact).
        "traps_not_verified": _share(
            sum(t["outcome"] in ("refused", "held", "dropped") for t in traps), len(traps)
        ),
        "traps": {"total": len(traps), "by_kind": by_kind},
        "corrections_reconciled": _share(reconciled, len(corrections)),
        "corrections": {
            "total": len(corrections),
            **dict(sorted(Counter(c["state"] for c in corrections).items())),
            "superseded_by_new": sum(c["superseded_by_new"] for c in corrections),
        },
        "questions": {
            "total": len(questions),
            "search_hit_at_1": _share(at1, len(questions)),
            f"search_hit_at_{SEARCH_K}": _share(at_k, len(questions)),
            "recall_hit": _share(recalled, len(questions))
            if any("in_recall" in q for q in questions)
            else None,
            # the answer as a fact, or, where no fact reached min_score, its turn quoted
            "recall_hit_or_turn": _share(quoted, len(questions))
            if any("in_recall" in q for q in questions)
            else None,
        },
        "candidates": {"total": sum(candidates.values()), **dict(sorted(candidates.items()))},
        "dropped_by_extractor": sum(len(r["dropped_by_extractor"]) for r in rows),
        "active_facts": active,
        "unexpected_active": {"count": unexpected, "share": _share(unexpected, active)},
        "latency": {
            "per_message": percentiles([r["seconds"] / r["messages"] for r in rows]),
            "per_conversation": percentiles(seconds),
            "extractor_share": round(extract / sum(seconds), 3) if sum(seconds) else None,
        },
    }


def _extractor(name: str, args: argparse.Namespace, stack: ExitStack) -> tuple[Extractor, dict]:
    if name == "embedded":
        return EmbeddedExtractor(), {}
    from gate.backends.llama_server import MODEL, llama_server

    url = args.server
    info: dict[str, Any] = {"model": MODEL, "timeout_s": args.llm_timeout}
    if url is None:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="llama-")))
        url = stack.enter_context(llama_server(logs, n_ctx=N_CTX, threads=args.llm_threads))
        info |= {"server": "llama_cpp.server (started here)", "n_ctx": N_CTX}
        info |= {"threads": args.llm_threads, "gguf": "SmolLM2-135M-Instruct.Q4_1.gguf"}
    else:
        info["server"] = url
    llm = LLMExtractor(MODEL, base_url=url, timeout=args.llm_timeout, retries=0)
    stack.callback(llm.close)
    info |= {"max_facts": llm.max_facts, "max_tokens": llm.max_tokens}
    return llm, info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extractor", action="append", choices=EXTRACTORS, default=[])
    parser.add_argument("--only", action="append", default=[], help="a conversation id")
    parser.add_argument("--server", help="an OpenAI-compatible /v1 URL for the llm extractor")
    parser.add_argument("--llm-threads", type=int, default=2)
    parser.add_argument("--llm-timeout", type=float, default=600.0)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    conversations = load()
    if args.only:
        unknown = sorted(set(args.only) - {c.id for c in conversations})
        if unknown:
            parser.error(f"unknown conversation(s) {unknown}")
        conversations = [c for c in conversations if c.id in args.only]
    result = provenance("conversations")
    result |= {
        "data": {
            "conversations": len(conversations),
            "messages": sum(len(c.messages) for c in conversations),
            "expected": sum(len(c.current) for c in conversations),
            "corrections": sum(len(c.corrections) for c in conversations),
            "questions": sum(len(c.questions) for c in conversations),
            "traps": sum(len(c.traps) for c in conversations),
        },
        "gate": "default (embedded verifier, default policy)",
        "matching": {"min_similarity": MIN_SIMILARITY, "search_k": SEARCH_K},
        "extractors": {},
    }
    matcher = Matcher()
    for name in args.extractor or list(EXTRACTORS):
        with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="conv-bench-") as work:
            extractor, info = _extractor(name, args, stack)
            info["warm_up_s"] = warm_up(extractor, Path(work), matcher, None)
            rows = []
            for conv in conversations:
                rows.append(run_conversation(conv, extractor, Path(work), matcher))
                print(f"{name} {conv.id}: {rows[-1]['seconds']:.1f} s", flush=True)
            summary = summarize(rows)
            result["extractors"][name] = {**info, **summary, "per_conversation": rows}
    save(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
