"""Human labels (``Store.add_label``, ``Store.labels``): a refusal that was wrong, a fact
that should not have been stored; who and when, on SQLite and PostgreSQL; checked input;
carried by rejection exports; erased with what they are about."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from audit_data import NS, fill

import memstore
from memstore import InvalidInput, NotFound

pytestmark = pytest.mark.both_databases


def test_labels_keep_who_when_and_note(data_dir: Path, tmp_path: Path) -> None:
    made = fill(data_dir, tmp_path / "files")
    refusal = made.rejections["unsupported"]
    before = datetime.now(UTC)
    with memstore.open(data_dir, NS, hook=memstore.Ungated(), index=False) as store:
        wrong = store.add_label("false_rejection", refusal.id, by="reviewer:kim", note=" typo ")
        admitted = store.add_label("false_admission", made.stale.id, by="reviewer:kim")
        again = store.add_label("false_rejection", refusal.id, by="reviewer:kim", note="later")
        other = store.add_label("false_rejection", refusal.id, by="reviewer:lee")
        assert again == wrong  # the same person again: the first label stands
        assert (wrong.kind, wrong.target_id, wrong.note) == ("false_rejection", refusal.id, "typo")
        assert wrong.labelled_by == "reviewer:kim" and wrong.namespace == NS
        assert before <= wrong.created_at <= datetime.now(UTC)
        assert admitted.note is None
        assert {x.id for x in store.labels()} == {wrong.id, admitted.id, other.id}
        assert [x.id for x in store.labels(kind="false_admission")] == [admitted.id]
        assert {x.id for x in store.labels(target_id=refusal.id)} == {wrong.id, other.id}
        assert len(store.labels(limit=1)) == 1 and len(store.labels(offset=2)) == 1

        out = io.StringIO()
        store.export_rejections(out, format="jsonl", verdict="unsupported")
        [line] = out.getvalue().splitlines()
        exported = json.loads(line)["labels"]
        assert [x["labelled_by"] for x in exported] == ["reviewer:kim", "reviewer:lee"]
        assert exported[0] == {
            "kind": "false_rejection",
            "note": "typo",
            "labelled_by": "reviewer:kim",
            "created_at": wrong.created_at.isoformat().replace("+00:00", "Z"),
            "id": wrong.id,
        }

        store.erase_rejection(refusal.id, "asked to forget")
        store.erase(made.stale.id, "asked to forget")
        assert store.labels() == []
        assert store.verify_audit_chain().ok

    with memstore.open(data_dir, "user:bob", hook=memstore.Ungated(), index=False) as bob:
        with pytest.raises(NotFound):  # another namespace's rejection
            bob.add_label("false_rejection", made.rejections["contradicted"].id, by="bob")
        assert bob.labels() == []


def test_bad_labels_name_the_field(data_dir: Path, tmp_path: Path) -> None:
    made = fill(data_dir, tmp_path / "files")
    refusal, fact = made.rejections["contradicted"], made.contradicted
    with memstore.open(data_dir, NS, hook=memstore.Ungated(), index=False) as store:
        cases = [
            (lambda: store.add_label("wrong", refusal.id, by="kim"), "kind"),
            (lambda: store.add_label("false_rejection", "", by="kim"), "target_id"),
            (lambda: store.add_label("false_rejection", refusal.id, by="  "), "by"),
            (
                lambda: store.add_label("false_rejection", refusal.id, by="k", note="x" * 2001),
                "note",
            ),
            (lambda: store.labels(kind="nope"), "kind"),
            (lambda: store.labels(limit=0), "limit"),
            (lambda: store.labels(offset=-1), "offset"),
        ]
        for call, field in cases:
            with pytest.raises(InvalidInput) as err:
                call()
            assert err.value.field == field
        with pytest.raises(NotFound, match="no fact"):  # a rejection is no fact
            store.add_label("false_admission", refusal.id, by="kim")
        with pytest.raises(NotFound, match="no rejection"):
            store.add_label("false_rejection", fact.id, by="kim")
        assert store.labels() == []
