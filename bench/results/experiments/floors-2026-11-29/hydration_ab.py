"""Reading and building a page of 100 facts, before and after 0390144, in one process.

    python bench/results/experiments/floors-2026-11-29/hydration_ab.py STORE_DIR

``STORE_DIR``: a ``bench/store_scale.py`` store. 100 active facts' rows are read by id
and built into ``FactPublic`` with the members and citations ``hydrate`` gave them:
before, as ``RowMapping`` rows turned into dicts and ``FactPublic(**fields)``; after,
as ``db.dicts`` and ``scope._build_fact``. The two must give equal facts; then 15
rounds of 100 of each, taking turns, and the median ms of each.
"""

from __future__ import annotations

import statistics
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from store_scale import NAMESPACE

import memstore
from memstore.metadata import stored as stored_metadata
from memstore.schemas import FactPublic
from memstore.storage import db
from memstore.storage import scope as scopes

with memstore.open(Path(sys.argv[1]), NAMESPACE, index=False, near_duplicate=None) as store:
    scope = store._scope
    with scope.session() as session:
        run = session.connection().execute
        ids = [
            row[0]
            for row in session.connection().exec_driver_sql(
                "SELECT id FROM facts WHERE status IN ('verified', 'unverified') "
                "ORDER BY id LIMIT 100"
            )
        ]
        facts = scope.facts_by_id(session, ids)
        members = {f.id: f.members for f in facts}
        citations = {f.id: f.citations for f in facts}

        def before() -> list[FactPublic]:
            built = []
            for row in run(scopes._FACT_ROWS, {"ids": ids}).mappings().all():
                fields = dict(row)
                meta = fields.pop("meta")
                built.append(
                    FactPublic(
                        **fields,
                        metadata=stored_metadata(meta),
                        members=members[fields["id"]],
                        citations=citations[fields["id"]],
                    )
                )
            return built

        def after() -> list[FactPublic]:
            built = []
            for row in db.dicts(run(scopes._FACT_ROWS, {"ids": ids})):
                fields = dict(row)
                fields["metadata"] = stored_metadata(fields.pop("meta"))
                fields["members"] = members[fields["id"]]
                fields["citations"] = citations[fields["id"]]
                built.append(scopes._build_fact(fields))
            return built

        assert before() == after()
        took: dict[str, list[float]] = {"before": [], "after": []}
        for _round in range(15):
            took["before"].append(timeit.timeit(before, number=100) * 10)
            took["after"].append(timeit.timeit(after, number=100) * 10)
        medians = {name: statistics.median(t) for name, t in took.items()}
        print(
            f"read and build 100 facts, ms p50 of 15 rounds: before {medians['before']:.2f}, "
            f"after {medians['after']:.2f} ({1 - medians['after'] / medians['before']:.0%} less)"
        )
