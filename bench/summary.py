"""``results/SUMMARY.md`` from the result files: gate quality, stores at scale, several
worker processes, the peer, conversations.

    python bench/summary.py   # rebuild it from bench/results/*.json

Every number comes from a result file, and each file names its own date, commit,
machine and command; ``make bench`` (``run_all.py``) rewrites this summary after
running the steps, with their wall times.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gate_table import table
from measure import RESULTS, commit, machine

STEPS_FILE = RESULTS / "steps.json"
SUMMARY = RESULTS / "SUMMARY.md"


def write_summary(command: str, timings: dict[str, float], total_s: float) -> Path:
    """Record the steps' wall times, then write ``SUMMARY.md``; returns its path."""
    steps = _load(STEPS_FILE) or {}
    run = steps.setdefault("runs", {}).setdefault(command, {})
    run.update(
        {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "commit": commit(),
            "machine": machine(),
            "total_s": round(total_s, 1),
        }
    )
    run.setdefault("steps_s", {}).update(timings)
    STEPS_FILE.write_text(json.dumps(steps, indent=2) + "\n", encoding="utf-8")
    SUMMARY.write_text(render(), encoding="utf-8")
    return SUMMARY


def render() -> str:
    """The whole summary as markdown."""
    parts = ["# Benchmark summary", "", *_runs(), ""]
    gates = [_load(p) for p in sorted(RESULTS.glob("gate_quality_*.json"))]
    gates = [g for g in gates if g]
    if gates:
        parts += [
            "## Gate quality and speed per verifier backend",
            "",
            "Check split of `../shared/data/grounding` and test split of "
            "`bench/data/agent_memory` (row `agent_memory`; a quote, where given, is cited), "
            "never trained or calibrated on; means over the public sets. "
            "Balanced accuracy at the gate's own `min_p1`; the gate end to end with its "
            "default thresholds, every row one write with all its evidence cited; latency "
            "of the gate (p1 and p0, cache off) on short BEGIN pairs against the latency budget "
            "of `docs/design.md`. "
            "A dash: not measured by that run (an older script, or a server-backed backend "
            "run by hand; see each run's command below).",
            "",
            table(gates),
            "",
            _provenance_list(gates),
            "",
        ]
    outcomes = [  # the latest score per backend (earlier ones keep a commit suffix)
        o
        for p in sorted(RESULTS.glob("three_outcomes_test_*.json"))
        if re.fullmatch(r"three_outcomes_test_[a-z-]+", p.stem) and (o := _load(p))
    ]
    if outcomes:
        parts += [
            "## Three outcomes: verified, held, refused",
            "",
            "The gate's old decision (refuse what the verifier cannot ground) beside the "
            "default (`bench/three_outcomes.py`): agent-memory test split, no citations, "
            "thresholds fitted on train and dev only (docs/verifier-decision-rule.md). "
            "Goals (issue 59): true refused <= 5%, false verified <= 5%, held <= 35%, "
            "checks add <= 5 ms per claim. The checks' time is given twice, p50 over "
            "batches of 32: alone (every text parsed afresh), and what they add to the "
            "gate's call, where they read beside the verifier (the gate with and without "
            "them, in turns, caches emptied).",
            "",
            "| backend | decision | true refused | false verified | held | true verified "
            "| checks ms/claim: alone / added |",
            "|---|---|---|---|---|---|---|",
        ]
        for o in outcomes:
            for name in ("old", "new"):
                r = o[name]
                ms = "-"
                if name == "new":
                    alone = o.get("checks_ms_per_claim", {}).get("p50", "-")
                    added = o.get("checks_added_ms_per_claim", {}).get("added", "-")
                    ms = f"{alone} / {added}"
                parts.append(
                    f"| {o['backend']} | {'three outcomes' if name == 'new' else 'old'} "
                    f"| {r['true_facts_refused']:.1%} | {r['false_facts_verified']:.1%} "
                    f"| {r['held']:.1%} | {r['true_facts_verified']:.1%} | {ms} |"
                )
        parts += ["", _provenance_list(outcomes), ""]
    floors = [f for p in sorted(RESULTS.glob("held_floor_*.json")) if (f := _load(p))]
    if floors:
        parts += [
            "The least share any two thresholds on p1 could leave held with both error goals "
            "met, fitted on the very rows scored (`bench/held_floor.py`: a floor, never "
            "reached by a default), beside the verifier's AUROC there and the AUROC a "
            "held share of 35% would need:",
            "",
            "| backend | split | AUROC | held floor | AUROC needed |",
            "|---|---|---|---|---|",
        ]
        for f in floors:
            for split, r in f["splits"].items():
                held = f"{r['floor']['held']:.1%}" if r["floor"] else "-"
                parts.append(
                    f"| {f['backend']} | {split} | {r['auroc_p1']:.2f} | {held} "
                    f"| {r['auroc_needed_for_held_035']:.2f} |"
                )
        parts += ["", _provenance_list(floors), ""]
    stores = sorted(
        (s for s in map(_load, RESULTS.glob("store_*.json")) if s),
        key=lambda s: (s["facts"], s.get("database", "sqlite")),
    )
    if stores:
        parts += [
            "## The store at scale",
            "",
            "Synthetic worlds (`bench/synthetic.py`); ungated ingest in batches of 1,000, "
            "gated ingest through the embedded gate in batches of 100 (a fifth citing "
            "another turn's evidence). Latency series stop after their time budget "
            "(see each command). The index size is measured at the end of the run, with "
            "the files of versions replaced in the last minute still on disk "
            "(`memstore.index.lance.KEEP_VERSIONS`; runs before 7c49e59 kept them an hour). "
            "A store built `--no-index` has no search index: no search (a dash), and its "
            "ingest, reopen, memory and disk leave out embedding and index writes (its "
            "gated ingest runs the gate without the near-duplicate check); the embedder's "
            "rate was measured instead, and the least time its index's texts (each stored "
            "fact, each piece of evidence) would take to embed at that rate. A PostgreSQL "
            "column ran on a server started for the run with fsync off; its peak RSS is "
            "the bench process's alone.",
            "",
            store_table(stores),
            "",
            _provenance_list(stores),
            "",
        ]
    scale_out = max(
        (s for s in map(_load, RESULTS.glob("scale_out_*.json")) if s),
        key=lambda s: s["facts"],
        default=None,
    )
    if scale_out:
        parts += [
            "## Several worker processes: PostgreSQL + the index on S3",
            "",
            f"`bench/scale_out.py`: {scale_out['facts']:,} facts filled first; then the "
            "processes of docs/deployment.md: W API workers (own directories, settings from "
            "`MEMSTORE_STORE__*`, `index_writes: queued`) and one `memstore index-worker`, "
            "PostgreSQL for the truth and LanceDB on SeaweedFS (S3), on one namespace. Writes "
            "ungated, one `add_fact` at a time. Serialized share: the time writes spent "
            "waiting on PostgreSQL locks, the index's write lock or the applier, over the "
            "time writes took. Commit to searchable: a probe write a second, timed until the "
            "searchers' local copy of the index (`object_store.read_cache`) holds it. Search: "
            "half the workers (at least one) search that copy while the others write.",
            "",
            scale_out_table(scale_out),
            "",
            _provenance_list([scale_out]),
            "",
        ]
    peers = sorted(
        (p for p in map(_load, RESULTS.glob("peer_mem0_*.json")) if p), key=lambda p: p["facts"]
    )
    if peers:
        parts += ["## Side by side with mem0", ""]
        for peer in peers:  # a table a run, smallest first
            parts += [peer_table(peer), "", _provenance_list([peer]), ""]
    writes = _load(RESULTS / "writes.json")
    if writes:
        parts += ["## Writes: the index inline or in the background", "", writes_table(writes)]
        parts += ["", _provenance_list([writes]), ""]
    started = _load(RESULTS / "startup.json")
    if started:
        parts += ["## Start-up", "", startup_table(started), "", _provenance_list([started]), ""]
    spread = _load(RESULTS / "namespaces.json")
    if spread:
        parts += ["## Namespaces: a busy one never stalls the others", ""]
        parts += [namespaces_table(spread), "", _provenance_list([spread]), ""]
    hosted = _load(RESULTS / "host_models.json")
    if hosted:
        parts += ["## Checking writes with the agent's own model", "", host_table(hosted)]
        parts += ["", _provenance_list([hosted]), ""]
    talk = _load(RESULTS / "conversations.json")
    if talk:
        parts += ["## Memory from conversations", "", conversations_table(talk), ""]
        parts += [_provenance_list([talk]), ""]
    casual = _load(RESULTS / "casual_chat.json")
    if casual:
        parts += ["## Long casual chats: search finds the answer's turn", ""]
        parts += [casual_table(casual), "", _provenance_list([casual]), ""]
    return "\n".join(parts)


def casual_table(result: dict[str, Any]) -> str:
    """hit@1/5/10 of the answer turns, in all and per category (``casual_chat.py``)."""
    lines = [
        f"{result['chats']} casual chats between friends ({result['turns']} turns, "
        "`bench/data/casual`, a development set: search's design was compared on it), "
        "each through `remember_conversation` into a fresh store; a question counts as "
        "found at k when one of `search(question, 10)`'s first k hits is a fact extracted "
        "from a turn that holds its answer.",
        "",
        "| questions | n | hit@1 | hit@5 | hit@10 |",
        "|---|---|---|---|---|",
        f"| all | {result['questions']} | {result['hit_at_1']:.2f} | {result['hit_at_5']:.2f} "
        f"| {result['hit_at_10']:.2f} |",
    ]
    for name, c in result["by_category"].items():
        lines.append(
            f"| {name} | {c['questions']} | {c['hit_at_1']:.2f} | {c['hit_at_5']:.2f} "
            f"| {c['hit_at_10']:.2f} |"
        )
    return "\n".join(lines)


def host_table(result: dict[str, Any]) -> str:
    """The routes to a model the agent has (``bench/host_models.py``), a row each."""
    lines = [
        f"`bench/host_models.py`: {result['rows']} agent-memory dev rows, one write each "
        f"(p1 and p0), k = {result['samples']} samples per question where sampled; the model "
        f"is {result['model']}, near chance as a judge: the costs are the routes', the "
        "outcomes the small model's (mostly held: few of its answers are a bare YES or NO).",
        "",
        "| route | requests / write | tokens / write | ms / claim p50 | p95 | bare answers "
        "| verified | held | refused |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["routes"]:
        bare = "-" if r["bare_answers"] is None else f"{r['bare_answers']:.0%}"
        o = r["outcomes"]
        lines.append(
            f"| {r['route']} | {r['requests_per_write']:g} | {r['tokens_per_write']:,.0f} "
            f"| {r['latency_per_claim']['p50_ms']:,.0f} | {r['latency_per_claim']['p95_ms']:,.0f} "
            f"| {bare} | {o['verified']:.0%} | {o['held']:.0%} | {o['refused']:.0%} |"
        )
    return "\n".join(lines)


def conversations_table(result: dict[str, Any]) -> str:
    """One column per extractor (``conversations.py``)."""
    data, runs = result["data"], result["extractors"]
    lines = [
        f"{data['conversations']} hand-written conversations ({data['messages']} messages, "
        "`bench/data/conversations`), each into a fresh store with the default gate; "
        f"{data['expected']} expected memories, {data['traps']} trap candidates, "
        f"{data['corrections']} corrections, {data['questions']} questions.",
        "",
        "| | " + " | ".join(runs) + " |",
        "|---|" + "---|" * len(runs),
    ]

    def row(label: str, value: Callable[[dict[str, Any]], str]) -> None:
        cells = []
        for r in runs.values():
            try:
                cells.append(value(r))
            except (KeyError, TypeError, ValueError):
                cells.append("-")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    def role(r: dict[str, Any], name: str) -> str:
        d = r["expected"]["by_role"][name]
        return f"{d['recall']:.2f} ({d['remembered']}/{d['expected']})"

    row("expected memories remembered", lambda r: f"{r['recall']:.2f}")
    for name in sorted({k for r in runs.values() for k in r["expected"]["by_role"]}):
        row(f"... from {name} turns", lambda r, name=name: role(r, name))
    row(
        "missed / refused by the gate / replaced later",
        lambda r: " / ".join(
            str(r["expected"].get(k, 0)) for k in ("missed", "refused", "replaced")
        ),
    )
    row("trap candidates refused", lambda r: f"{r['traps_refused']:.2f}")
    row(
        "trap candidates not verified (refused or held)",
        lambda r: f"{r['traps_not_verified']:.2f}" if "traps_not_verified" in r else "-",
    )
    for kind in ("misattributed", "stale", "negated", "hedged", "request", "unsupported"):
        row(
            f"... {kind}",
            lambda r, kind=kind: (
                f"{r['traps']['by_kind'][kind]['share_refused']:.2f} "
                f"({r['traps']['by_kind'][kind].get('refused', 0)}/"
                f"{r['traps']['by_kind'][kind]['traps']})"
            ),
        )
    row("corrections reconciled", lambda r: f"{r['corrections_reconciled']:.2f}")
    row(
        "questions: search hit@1 / hit@5",
        lambda r: (
            f"{r['questions']['search_hit_at_1']:.2f} / {r['questions']['search_hit_at_5']:.2f}"
        ),
    )
    row("questions: answer in `recall`", lambda r: f"{r['questions']['recall_hit']:.2f}")
    row(
        "... or its turn quoted there",
        lambda r: (
            f"{r['questions']['recall_hit_or_turn']:.2f}"
            if r["questions"].get("recall_hit_or_turn") is not None
            else "-"
        ),
    )
    row(
        "active facts matching no expected memory",
        lambda r: (
            f"{r['unexpected_active']['share']:.2f} "
            f"({r['unexpected_active']['count']}/{r['active_facts']})"
        ),
    )
    row(
        "latency per message, ms p50 / p95",
        lambda r: (
            f"{r['latency']['per_message']['p50_ms']:.0f} / "
            f"{r['latency']['per_message']['p95_ms']:.0f}"
        ),
    )
    row(
        "latency per conversation, s p50 / p95",
        lambda r: (
            f"{r['latency']['per_conversation']['p50_ms'] / 1000:.1f} / "
            f"{r['latency']['per_conversation']['p95_ms'] / 1000:.1f}"
        ),
    )
    row("share of that time in the extractor", lambda r: f"{r['latency']['extractor_share']:.2f}")
    row("conversations the extractor failed", lambda r: str(len(r["failed"])))
    return "\n".join(lines)


def store_table(stores: list[dict[str, Any]]) -> str:
    """One column per store size."""
    heads = [_store_head(s) for s in stores]
    lines = ["| | " + " | ".join(heads) + " |", "|---|" + "---|" * len(stores)]

    def row(label: str, value: Callable[[dict[str, Any]], str]) -> None:
        cells = []
        for s in stores:
            try:
                cells.append(value(s))
            except (KeyError, TypeError, ValueError):
                cells.append("-")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    def ms(key: str) -> Callable[[dict[str, Any]], str]:
        def cell(s: dict[str, Any]) -> str:
            d = s["latency"][key]
            return f"{d['p50_ms']:.1f} / {d['p95_ms']:.1f}"

        return cell

    row("ungated ingest, facts/s", lambda s: f"{s['ungated_ingest']['facts_per_second']:.0f}")
    row("ungated ingest, s", lambda s: f"{s['ungated_ingest']['seconds']:.0f}")
    row(
        "gated ingest (embedded), facts/s",
        lambda s: f"{s['gated_ingest']['facts_per_second']:.0f}",
    )
    row(
        "gated: accepted / rejected",
        lambda s: f"{s['gated_ingest']['accepted']} / {s['gated_ingest']['rejected']}",
    )
    for key, label in [
        ("get_fact", "get_fact"),
        ("facts_about_popular", "facts_about (popular entity)"),
        ("neighborhood_2hop_random", "2-hop neighborhood (random entity)"),
        ("neighborhood_2hop_hub", "2-hop neighborhood (the hub)"),
        ("search_hybrid_k10", "search hybrid top-10"),
        ("search_vector_k10", "search vector top-10"),
        ("search_text_k10", "search text top-10"),
        ("rejections_by_verdict_50", "audit: rejections by verdict, 50"),
        ("count_rejections", "audit: count_rejections"),
    ]:
        row(f"{label}, ms p50 / p95", ms(key))
    row(
        "facts returned: 2-hop random / hub",
        lambda s: (
            f"{s['latency']['neighborhood_2hop_random']['mean_facts']:.0f} / "
            f"{s['latency']['neighborhood_2hop_hub']['mean_facts']:.0f}"
        ),
    )
    row(
        "vector index (facts / evidence)",
        lambda s: (
            " / ".join("HNSW" if t["vector_index"] else "flat" for t in s["index_tables"].values())
            if s.get("index", True)
            else "none built (`--no-index`)"
        ),
    )
    row(
        "index texts, embedding them here at least, min",
        lambda s: f"{s['index_floor']['texts']:,}, {s['index_floor']['minutes']:.0f}",
    )
    row("reopen, s", lambda s: f"{s['reopen_seconds']:.2f}")
    row("re-verification, facts/s", lambda s: f"{s['reverify']['facts_per_second']:.0f}")
    row("peak RSS, MiB", lambda s: f"{max(s['peak_rss_mib'].values()):.0f}")
    row(
        "disk: database + index, MiB",
        lambda s: f"{_database_mib(s['disk_mib']):.0f} + {_mib(s['disk_mib']['index'])}",
    )
    return "\n".join(lines)


def _store_head(result: dict[str, Any]) -> str:
    """A store's column head: its size, and PostgreSQL or no index where so."""
    head = f"{result['facts']:,} facts"
    if result.get("database") == "postgresql":
        head += ", PostgreSQL (fsync off)"
    if not result.get("index", True):
        head += ", no index"
    return head


def _database_mib(disk: dict[str, Any]) -> float:
    """The database's size (``sqlite`` in results before PostgreSQL was measured)."""
    return float(disk["database"] if "database" in disk else disk["sqlite"])


def _mib(size: float | None) -> str:
    """A size in MiB, or "none" for what was not built."""
    return "none" if size is None else f"{size:.0f}"


def _p50_p95(latency: dict[str, Any] | None) -> str:
    """``p50 / p95`` in whole milliseconds, or ``-`` when nothing was timed."""
    return "-" if not latency else f"{latency['p50_ms']:.0f} / {latency['p95_ms']:.0f}"


def scale_out_table(result: dict[str, Any]) -> str:
    """One row per worker count (``scale_out.py``), then the projection and the failover."""
    fill = result["fill"]
    lines = [
        f"Fill: {fill['facts']:,} facts in {fill['seconds']:.0f} s, "
        f"{fill['facts_per_second']:.0f} facts/s (one process, batches of {fill['batch']:,}).",
        "",
        "| workers | add_fact, facts/s | x 1 worker | add_fact, ms p50 / p95 "
        "| serialized share | commit to searchable, s p50 / p95 | most behind, s "
        "| search (searchers + writers), ms p50 / p95 | all facts once |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    first = result["rounds"][0]["add_fact"]["per_second"]
    for r in result["rounds"]:
        one, search, lag = r["add_fact"], r["search_hybrid_k10"], r["lag"]
        probe = lag["probe_commit_to_searchable"]
        probed = f"{probe['p50_ms'] / 1000:.2f} / {probe['p95_ms'] / 1000:.2f}" if probe else "-"
        # The bound: in seconds since MAX_BEHIND; a result from before it had a queue length.
        bound = f" (bound {lag['behind_bound_s']:.0f})" if "behind_bound_s" in lag else ""
        share = r["serialized"]["share"]
        lines.append(
            f"| {r['workers']} | {one['per_second']:.1f} | {one['per_second'] / first:.2f} | "
            f"{_p50_p95(one['latency'])} | "
            f"{'-' if share is None else f'{share:.1%}'} | {probed} | "
            f"{lag['max_behind_s']:.1f}{bound} | "
            f"({search['searchers']} + {search['writers_meanwhile']}) "
            f"{_p50_p95(search['latency'])} | "
            f"{'yes' if r['check']['ok'] else 'NO'} |"
        )
    projection = result.get("projection")
    if projection:
        at = projection["workers"]
        lines += [
            "",
            f"Projection (Amdahl, from one worker's {projection['one_worker_facts_per_s']:.0f} "
            f"facts/s and the largest serialized share, {projection['serialized_share']:.1%}): "
            + "; ".join(
                f"{n} workers {p['amdahl_facts_per_s']:,.0f} facts/s, sustained "
                f"{p['sustained_facts_per_s']:,.0f} (limit: {p['limit']})"
                for n, p in at.items()
            )
            + f". The index worker applied "
            f"{projection['applier_facts_per_s_of_work'] or 0:,.0f} facts per second of work.",
        ]
    failover = result.get("failover")
    if failover:
        took = failover["other_index_worker_led_after_s"]
        lines += [
            "",
            f"Failover: with {failover['workers']} workers writing, the leading index worker "
            f"was killed (SIGKILL) {failover['killed_after_s']:.0f} s in; the other led "
            + (f"{took:.1f} s later" if took is not None else "never")
            + f"; all facts once: {'yes' if failover['check']['ok'] else 'NO'}.",
        ]
    return "\n".join(lines)


def writes_table(result: dict[str, Any]) -> str:
    """One row per ``index_writes`` mode (``writes.py``)."""
    paced = result.get("paced")
    lines = [
        f"Ungated, on a new local store: {result['single']} single `add_fact` calls back to "
        "back, "
        + (
            f"then {paced} more {result['pause_ms']:.0f} ms apart (as an agent writes a "
            "memory a turn: the call, and the time from the call until the index holds "
            "the fact), "
            if paced
            else ""
        )
        + f"then {result['bulk']} facts by `add_facts`, then `sync_index()`; load average "
        f"at the start {result.get('load_average_at_start', 'not recorded')}.",
        "",
        "| index_writes | add_fact ms p50 / p95, back to back | add_fact ms p50 / p95, "
        "paced | in the index after, ms p50 / p95 | add_facts facts/s | queued after the "
        "bulk write | sync_index s | last fact found |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in result["modes"]:
        one, apart, seen = (
            m["single_add_fact"],
            m.get("paced_add_fact"),
            m.get("paced_in_index_after"),
        )
        late = m.get("paced_not_in_index_within_s", {}).get("writes", 0)
        lines.append(
            f"| {m['mode']} | {one['p50_ms']:.1f} / {one['p95_ms']:.1f} | "
            + (f"{apart['p50_ms']:.1f} / {apart['p95_ms']:.1f} | " if apart else "- | ")
            + (f"{seen['p50_ms']:.0f} / {seen['p95_ms']:.0f}" if seen else "-")
            + (
                f" ({late} not within {m['paced_not_in_index_within_s']['seconds']} s)"
                if late
                else ""
            )
            + f" | {m['bulk_facts_per_s']} | {m['queued_after_bulk']} | "
            f"{m['sync_index_after_bulk_s']} | {'yes' if m['last_bulk_fact_found'] else 'NO'} |"
        )
    if "bulk_sql_only_facts_per_s" in result:
        lines += [
            "",
            f"The same `add_facts` batches on a store with no search index (`index=False`), "
            f"SQL alone: {result['bulk_sql_only_facts_per_s']} facts/s.",
        ]
    return "\n".join(lines)


def startup_table(result: dict[str, Any]) -> str:
    """One row per command, then the server's first answer (``startup.py``)."""
    load = ", ".join(f"{x:.2f}" for x in result["load_average_before"])
    lines = [
        f"Each command a new process (the console script) on a store of {result['facts']} "
        f"facts and {result['rejections']} rejections, {result['repeats']} timed runs after "
        f"one untimed; load average before the run {load}.",
        "",
        "| command | ms p50 / p95 | goal, ms | met |",
        "|---|---|---|---|",
    ]
    rows = [(f"`{' '.join(c['argv'])}`", c) for c in result["commands"].values()]
    rows.append(("`memstore serve` to its first `GET /health`", result["serve_first_answer"]))
    for name, r in rows:
        lines.append(
            f"| {name} | {r['p50_ms']:.0f} / {r['p95_ms']:.0f} | {r['goal_ms']} | "
            f"{'yes' if r['met'] else 'no'} |"
        )
    return "\n".join(lines)


def namespaces_table(result: dict[str, Any]) -> str:
    """First requests to new namespaces beside another's backlog (``namespaces.py``)."""
    first, many = result["first_requests"], result["many_namespaces"]
    met = first["seconds"]["p95_ms"] <= first["goal_p95_s"] * 1000
    return "\n".join(
        [
            f"`memstore serve` on a store whose namespace `busy` has "
            f"{result['backlog_queued']:,} search-index changes queued "
            f"({result['backlog_left_after']:,} still queued after the run: no other "
            "namespace's open applied them).",
            "",
            "| requests | at once | ms p50 / p95 | timeouts | server memory, MiB | goal | met |",
            "|---|---|---|---|---|---|---|",
            f"| {first['count']} first requests to new namespaces | {first['count']} | "
            f"{first['seconds']['p50_ms']:.0f} / {first['seconds']['p95_ms']:.0f} | "
            f"{first['not_ok']} not ok | | p95 <= {first['goal_p95_s'] * 1000:.0f} ms | "
            f"{'yes' if met else 'no'} |",
            f"| {many['count']:,} more | {many['concurrency']} | "
            f"{many['seconds']['p50_ms']:.0f} / {many['seconds']['p95_ms']:.0f} | "
            f"{many['timeouts']} | {many['server_rss_mib_before']:.0f} -> "
            f"{many['server_rss_mib_after']:.0f} (pool of {many['max_open_stores']}) | "
            f"0 timeouts | {'yes' if many['timeouts'] == 0 else 'no'} |",
        ]
    )


def peer_table(peer: dict[str, Any]) -> str:
    """memstore and mem0 on the same data, with the ratios."""
    w, q, hits, disk = peer["write"], peer["search_k10"], peer["hit_at_10"], peer["disk_mib"]
    lines = [
        f"{peer['facts']:,} synthetic facts, one process, the same MiniLM embedder; "
        f"mem0 {peer['mem0']['version']} local (Qdrant on disk, `infer=False`), "
        "memstore with the gate off, index writes "
        f"{peer.get('index_writes', 'inline')}."
        + (
            " With background index writes, calls back to back share the cores with the "
            "index thread embedding the writes before them; paced as an agent writes (a "
            "memory a turn), the thread is done before the next call. memstore embeds each "
            "new piece of evidence too, mem0 only the memory."
            if peer.get("index_writes") == "background"
            else ""
        ),
        "",
        "| | memstore | mem0 | memstore / mem0 |",
        "|---|---|---|---|",
        f"| add, facts/s (memstore `add_facts` batches of 100; mem0 `add` one a call) | "
        f"{w['memstore_add_facts']['facts_per_second']:.0f} | "
        f"{w['mem0_add_one_fact_per_call']['facts_per_second']:.0f} | "
        f"{w['ratio_memstore_add_facts_to_mem0_add']:.2f} |",
        f"| add one at a time, facts/s | {w['memstore_add_fact']['facts_per_second']:.0f} | "
        f"{w['mem0_add_one_fact_per_call']['facts_per_second']:.0f} | "
        f"{w['ratio_memstore_add_fact_to_mem0_add']:.2f} |",
    ]
    paced = w.get("paced")
    if paced:
        mine, theirs = paced["memstore_add_fact"], paced["mem0_add"]
        seen, late = paced["memstore_in_index_after"], paced.get("memstore_not_in_index_within_5_s")
        indexed = (
            f"in the index after {seen['p50_ms']:.0f} / {seen['p95_ms']:.0f} ms"
            if seen
            else "none in the index within 5 s"
        ) + (f", {late} not within 5 s" if late and seen else "")
        lines.append(
            f"| add one at a time, {paced['pause_ms']:.0f} ms apart: ms p50 / p95 of a call "
            f"(memstore: then {indexed}) | "
            f"{mine['p50_ms']:.1f} / {mine['p95_ms']:.1f} | "
            f"{theirs['p50_ms']:.1f} / {theirs['p95_ms']:.1f} | "
            f"{paced['ratio_memstore_to_mem0_add_p50']:.2f} |"
        )
    lines += [
        f"| search top-10, ms p50 / p95 (memstore hybrid) | "
        f"{q['memstore_hybrid']['p50_ms']:.1f} / {q['memstore_hybrid']['p95_ms']:.1f} | "
        f"{q['mem0']['p50_ms']:.1f} / {q['mem0']['p95_ms']:.1f} | "
        f"{q['ratio_memstore_hybrid_to_mem0_p50']:.2f} |",
        f"| search top-10, ms p50 / p95 (memstore vector) | "
        f"{q['memstore_vector']['p50_ms']:.1f} / {q['memstore_vector']['p95_ms']:.1f} | "
        f"{q['mem0']['p50_ms']:.1f} / {q['mem0']['p95_ms']:.1f} | "
        f"{q['ratio_memstore_vector_to_mem0_p50']:.2f} |",
    ]
    for kind in ("paraphrase", "question", "entity"):
        h = hits.get(kind)
        if h:
            lines.append(
                f"| hit@10, {kind} probes (memstore hybrid / vector) | "
                f"{h['memstore_hybrid']:.2f} / {h['memstore_vector']:.2f} | {h['mem0']:.2f} | "
                f"{h['memstore_hybrid'] / h['mem0']:.2f} |"
                if h["mem0"]
                else "| - | - | - | - |"
            )
    caught = w.get("memstore_index_after_writes")
    if caught:
        lines.append(
            f"| after the writes: queued for the index, `sync_index()` s | "
            f"{caught['queued']} / {caught['seconds']} | - | - |"
        )
    lines.append(
        f"| disk, MiB | {disk['memstore_total']:.1f} | {disk['mem0_total']:.1f} | "
        f"{disk['ratio_memstore_to_mem0']:.2f} |"
    )
    return "\n".join(lines)


def _runs() -> list[str]:
    steps = _load(STEPS_FILE) or {}
    lines = []
    for command, run in steps.get("runs", {}).items():
        m = run["machine"]
        lines.append(
            f"- `{command}`: {run['total_s'] / 60:.1f} min on {m['cpus']} CPUs "
            f"({m['processor']}, {m['platform']}, Python {m['python']}), "
            f"{run['date']}, commit {run['commit']}; steps: "
            + ", ".join(f"{k} {v:.0f} s" for k, v in run["steps_s"].items())
        )
    return lines or ["- no `make bench` run recorded yet; numbers below from single scripts"]


def _provenance_list(results: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"- `{r.get('command', '?')}` at {r.get('date', '?')}, commit {r.get('commit', '?')}"
        for r in results
    )


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


if __name__ == "__main__":
    SUMMARY.write_text(render(), encoding="utf-8")
    print(SUMMARY.read_text(encoding="utf-8"))
    sys.exit(0)
