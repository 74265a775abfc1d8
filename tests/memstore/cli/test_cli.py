"""The ``memstore`` command line as people and scripts use it: exit codes, tables, JSON.

Most tests drive the Typer app in-process (CliRunner); a few run the installed
console script as a subprocess. The real embedded gate decides every gated write.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_runner import CLEAN_ENV, runner_at
from gate_samples import REFUSE_UNGROUNDED_ENV
from typer.testing import CliRunner

import memstore
from memstore.cli import Exit, app
from memstore.cli.configure import settings_yaml

NS = "user:alice"
SAID = "Alice: I'm allergic to peanuts."
PEANUTS = [
    "Alice is allergic to peanuts.",
    "-m",
    "Alice:person:patient",
    "-m",
    "peanuts:food:allergen",
]
SHELLFISH = [
    "Alice is allergic to shellfish.",
    "-m",
    "Alice:person:patient",
    "-m",
    "shellfish:food:allergen",
]


@pytest.fixture
def cli(tmp_path: Path) -> Any:
    """Run ``memstore --store <tmp store> ARGS``; returns the click Result."""
    return runner_at(str(tmp_path / "mem"))


def test_add_stores_a_grounded_fact_and_exits_3_with_the_verdict_for_an_ungrounded_one(
    cli: Any,
) -> None:
    stored = cli("add", *PEANUTS, "-e", SAID, "-n", NS, "--json")
    assert stored.exit_code == Exit.OK, stored.output
    fact = json.loads(stored.stdout)["fact"]
    assert (fact["status"], fact["verdict"], fact["namespace"]) == ("verified", "grounded", NS)

    rejected = cli("add", *SHELLFISH, "-e", SAID, "-n", NS)
    assert rejected.exit_code == Exit.REJECTED
    assert "rejected (insufficient_evidence)" in rejected.stderr
    assert "Nothing was stored" in rejected.stderr and "memstore audit" in rejected.stderr

    with memstore.open(cli.store, NS, index=False) as store:
        assert [f.statement for f in store.facts_about("Alice")] == [fact["statement"]]
        [logged] = store.rejections()
    assert logged.id in rejected.stderr

    listed = cli("audit", "-n", NS, "--format", "json")
    assert listed.exit_code == 0
    assert [r["id"] for r in json.loads(listed.stdout)] == [logged.id]
    table = cli("-n", NS, "audit", env={"COLUMNS": "250"})
    assert logged.id in table.stdout and "insufficient_evidence" in table.stdout
    csv = cli("audit", "-n", NS, "--format", "csv").stdout.splitlines()
    assert csv[0].startswith("id,namespace,created_at,verdict") and logged.id in csv[1]
    counts = cli("audit", "-n", NS, "--counts", "verdict", "--format", "json")
    assert json.loads(counts.stdout) == {"insufficient_evidence": 1}
    # The rejection is Alice's alone: Bob's namespace holds nothing, and a read says so.
    bobs = cli("audit", "-n", "user:bob", "--format", "json")
    assert bobs.exit_code == Exit.BAD_INPUT and "'user:bob' holds nothing" in bobs.stderr
    assert "namespaces here: user:alice" in bobs.stderr


def test_audit_pages_by_the_printed_cursor(cli: Any) -> None:
    for day in ("Monday", "Tuesday", "Friday"):  # other evidence each time: three rows
        assert cli("add", *SHELLFISH, "-e", f"{SAID} ({day})", "-n", NS).exit_code == Exit.REJECTED
    again = cli("add", *SHELLFISH, "-e", f"{SAID} (Friday)", "-n", NS, "--json")
    assert again.exit_code == Exit.REJECTED
    assert json.loads(again.stdout)["rejection"]["attempts"] == 2
    whole = [r["id"] for r in json.loads(cli("audit", "-n", NS, "--format", "json").stdout)]
    first = cli("audit", "-n", NS, "--limit", "2", "--format", "json")
    [cursor] = re.findall(r"--cursor (\S+)", first.stderr)
    rest = cli("audit", "-n", NS, "--limit", "2", "--format", "json", "--cursor", cursor)
    assert rest.exit_code == 0 and "--cursor" not in rest.stderr
    paged = [r["id"] for r in json.loads(first.stdout) + json.loads(rest.stdout)]
    assert len(whole) == 3 and paged == whole
    both = cli("audit", "-n", NS, "--offset", "1", "--cursor", cursor)
    assert both.exit_code == Exit.BAD_INPUT and "offset" in both.stderr


def test_add_reads_facts_from_a_file_or_stdin(cli: Any, tmp_path: Path) -> None:
    facts = [
        {
            "statement": "Bob works at Acme.",
            "members": [["Bob", "person", "employee"], ["Acme", "org", "employer"]],
            "evidence": ["Bob: I work at Acme."],
        },
        {
            "statement": "Bob works at Initech.",
            "members": [["Bob", "person", "employee"], ["Initech", "org", "employer"]],
            "evidence": ["Bob: I work at Acme."],
        },
    ]
    path = tmp_path / "facts.yaml"
    path.write_text(yaml.safe_dump(facts))
    done = cli("add", "--file", str(path), "--json")
    assert done.exit_code == Exit.REJECTED  # one of the two was rejected
    results = json.loads(done.stdout)
    assert [r["stored"] for r in results] == [True, False]
    assert results[1]["rejection"]["statement"] == "Bob works at Initech."

    one = {
        **facts[0],
        "statement": "Bob is a chemist at Acme.",
        "evidence": ["Bob: I work at Acme as a chemist."],
    }
    piped = cli("add", "--file", "-", "--json", input=json.dumps(one))
    assert piped.exit_code == Exit.OK, piped.output
    assert json.loads(piped.stdout)[0]["fact"]["statement"] == "Bob is a chemist at Acme."

    evidence_on_stdin = cli(
        "add",
        "Carol drinks tea every morning.",
        "-m",
        "Carol",
        "-m",
        "tea",
        "-e",
        "-",
        input="Carol: I drink tea every morning.",
    )
    assert evidence_on_stdin.exit_code == Exit.OK, evidence_on_stdin.output
    with memstore.open(cli.store, index=False) as store:
        [carol] = store.facts_about("Carol")
        assert store.get_evidence(carol.citations[0].evidence_id).text == (
            "Carol: I drink tea every morning."
        )


def test_evidence_files_and_quotes_become_sources_and_citations(cli: Any, tmp_path: Path) -> None:
    profile = tmp_path / "alice.md"
    profile.write_text("# Alice\n\nAlice lives in Paris and works at Acme.\n")
    done = cli(
        "add",
        "Alice lives in Paris.",
        "-m",
        "Alice:person:resident",
        "-m",
        "Paris:place:home",
        "--evidence-file",
        str(profile),
        "-q",
        "Alice lives in Paris",
        "--json",
    )
    assert done.exit_code == Exit.OK, done.output
    fact = json.loads(done.stdout)["fact"]
    [citation] = fact["citations"]
    assert (citation["start"], citation["end"]) == (9, 29)
    with memstore.open(cli.store, index=False) as store:
        assert store.get_evidence(citation["evidence_id"]).source == profile.resolve().as_uri()


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["add", "", "-m", "Alice", "-e", SAID], "statement"),
        (["add", "A fact.", "-e", SAID], "members"),
        (["add", "A fact.", "-m", "Alice"], "evidence"),
        (["add", "A fact.", "-m", "Alice", "-e", SAID, "-q", "not there"], "quote"),
        (["add", "A fact.", "--file", "no-such-file.json"], "file"),
        (["add", "A fact.", "-m", "Alice", "-e", SAID, "--confidence", "2"], "confidence"),
        (["get", "no-such-fact"], "no fact 'no-such-fact'"),
        (["search", "peanuts", "--evidence", "--offset", "5"], "offset"),
        (["-n", "not a namespace!", "stats"], "store.namespace"),
        (["audit", "--format", "xml"], "format"),
        (["audit", "--since", "last tuesday"], "since"),
        (["audit", "--counts", "hour"], "by"),
        (["search", "   "], "query"),
        (["search", "x", "--mode", "psychic"], "mode"),
        (["reverify", "--every", "3x", "--watch"], "every"),
        (["mcp", "--transport", "carrier-pigeon"], "transport"),
    ],
)
def test_bad_input_exits_2_naming_the_field(cli: Any, args: list[str], field: str) -> None:
    assert cli("init").exit_code == Exit.OK  # reads refuse a missing store before their input
    done = cli(*args)
    assert done.exit_code == Exit.BAD_INPUT, done.output
    assert field in done.stderr
    assert "next:" in done.stderr or "Usage" in done.stderr


def test_reads_get_search_neighbors_history_stats_retract(cli: Any) -> None:
    fact = json.loads(cli("-n", NS, "add", *PEANUTS, "-e", SAID, "--json").stdout)["fact"]
    got = json.loads(cli("-n", NS, "get", fact["id"], "--json").stdout)
    assert got["statement"] == "Alice is allergic to peanuts."
    shown = cli("-n", NS, "get", fact["id"], env={"COLUMNS": "200"})
    assert "Alice (person, patient), peanuts (food, allergen)" in shown.stdout

    hits = json.loads(cli("-n", NS, "search", "what is alice allergic to?", "--json").stdout)
    assert hits[0]["fact"]["id"] == fact["id"]
    nobody = cli("-n", "user:bob", "search", "allergic", "--json")  # a namespace never written
    assert nobody.exit_code == Exit.BAD_INPUT and "'user:bob' holds nothing" in nobody.stderr

    hood = json.loads(cli("-n", NS, "neighbors", "Alice", "--json").stdout)
    assert {e["name"] for e in hood["entities"]} == {"Alice", "peanuts"}
    assert [f["id"] for f in hood["facts"]] == [fact["id"]]

    history = json.loads(cli("-n", NS, "history", fact["id"], "--json").stdout)
    assert [v["kind"] for v in history["verifications"]] == ["write"]

    numbers = json.loads(cli("-n", NS, "stats", "--json").stdout)
    assert numbers["facts"] == {"verified": 1} and numbers["entities"] == 2

    gone = cli("-n", NS, "retract", fact["id"], "--reason", "she was tested again", "--json")
    assert gone.exit_code == 0 and json.loads(gone.stdout)["status"] == "retracted"
    assert json.loads(cli("-n", NS, "stats", "--json").stdout)["facts"] == {"retracted": 1}
    again = cli("-n", NS, "retract", fact["id"], "--reason", "twice")
    assert again.exit_code == Exit.BAD_INPUT and "fact_id" in again.stderr


def test_verify_checks_a_claim_without_storing_it(cli: Any) -> None:
    ok = cli("verify", "Alice is allergic to peanuts.", "-e", SAID, "--json")
    assert ok.exit_code == Exit.OK
    assert json.loads(ok.stdout)["status"] == "grounded"
    no = cli("verify", "Alice is allergic to shellfish.", "-e", SAID)
    assert no.exit_code == Exit.REJECTED and "insufficient_evidence" in no.stdout
    assert not Path(cli.store).exists()  # verify needs no store and creates none


def test_write_config_writes_a_file_only_its_owner_reads(cli: Any, tmp_path: Path) -> None:
    config = tmp_path / "memstore.yaml"
    made = cli("init", "--write-config", str(config))
    assert made.exit_code == 0, made.output
    assert "secrets included" in made.stdout
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


def test_written_settings_hold_the_secrets_in_the_clear_and_config_show_masks_them(
    tmp_path: Path,
) -> None:
    keys = {"access_key_id": "AKIA-test-key-id", "secret_access_key": "s3cr3t/with+chars"}
    chosen = memstore.Settings(store={"index": "s3://bucket/memory", "object_store": keys})
    config = tmp_path / "memstore.yaml"
    config.write_text(settings_yaml(chosen))
    read_back = memstore.load_settings(config)
    assert read_back == chosen
    written = read_back.store.object_store
    assert written.secret_access_key is not None
    assert written.secret_access_key.get_secret_value() == "s3cr3t/with+chars"
    shown = settings_yaml(chosen, masked=True)
    assert "s3cr3t" not in shown and "AKIA" not in shown


def test_global_options_environment_and_config_file(cli: Any, tmp_path: Path) -> None:
    config = tmp_path / "memstore.yaml"
    made = cli("init", "--write-config", str(config))
    assert made.exit_code == 0, made.output
    assert memstore.load_settings(config).store.url == cli.store
    assert cli("init", "--write-config", str(config)).exit_code == Exit.BAD_INPUT  # no overwrite

    settings = yaml.safe_load(config.read_text())
    settings["store"]["namespace"] = "user:carol"
    settings["hallucination"]["enabled"] = False
    settings["server"]["api_keys"] = {"carol-secret-key-0123456789": ["user:carol"]}
    config.write_text(yaml.safe_dump(settings))
    runner = CliRunner()
    env = {"MEMSTORE_CONFIG": str(config), "MEMSTORE_URL": None, "MEMSTORE_NAMESPACE": None}
    # The gate is off in this config: an unsupported fact is stored, ungated.
    done = runner.invoke(
        app, ["add", "Carol owns a boat.", "-m", "Carol", "-e", "unrelated", "--json"], env=env
    )
    assert done.exit_code == 0, done.output
    fact = json.loads(done.stdout)["fact"]
    assert (fact["namespace"], fact["verdict"]) == ("user:carol", "ungated")

    shown = runner.invoke(app, ["config", "show", "--json"], env=env)
    assert json.loads(shown.stdout)["store"]["namespace"] == "user:carol"
    assert "carol-secret-key-0123456789" not in shown.stdout and "caro..." in shown.stdout

    # The command's options win over the environment's, which win over the file's.
    # (user:dave and user:erin hold nothing: the read names the namespace it was given.)
    env_ns = {**env, "MEMSTORE_NAMESPACE": "user:dave"}
    dave = runner.invoke(app, ["stats", "--json"], env=env_ns)
    assert dave.exit_code == Exit.BAD_INPUT and "'user:dave' holds nothing" in dave.stderr
    erin = runner.invoke(app, ["stats", "-n", "user:erin", "--json"], env=env_ns)
    assert erin.exit_code == Exit.BAD_INPUT and "'user:erin' holds nothing" in erin.stderr

    bad = tmp_path / "bad.yaml"
    bad.write_text("hallucination:\n  timeout: -1\n")
    refused = runner.invoke(app, ["--config", str(bad), "stats"], env=CLEAN_ENV)
    assert refused.exit_code == Exit.BAD_INPUT and "hallucination.timeout" in refused.stderr


def test_serve_without_api_keys_says_how_to_add_one(cli: Any) -> None:
    done = cli("serve")
    assert done.exit_code == Exit.BAD_INPUT
    assert "server.api_keys" in done.stderr and "MEMSTORE_SERVER__API_KEYS" in done.stderr


def test_demo_refuses_a_directory_that_holds_something(cli: Any, tmp_path: Path) -> None:
    # A long path on a narrow terminal: the message must arrive whole, never wrapped.
    busy = tmp_path.joinpath(*["a-rather-long-directory-name"] * 8, "busy")
    assert len(str(busy)) > 200
    busy.mkdir(parents=True)
    (busy / "notes.txt").write_text("mine")
    done = cli("demo", str(busy), env={"COLUMNS": "40"})
    assert done.exit_code == Exit.BAD_INPUT
    assert f"{busy} is not empty" in done.stderr
    assert (busy / "notes.txt").read_text() == "mine"


def test_bench_measures_writes_claims_and_search(cli: Any) -> None:
    done = cli("bench", "--facts", "20", "--json")
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert result["gated writes, batches of 50 (facts/s)"] > 0
    assert 0 < result["search k=10 p50 (ms)"] <= result["search k=10 p95 (ms)"]
    assert "cores" in result["machine"]


def test_the_console_script_exit_codes_and_json(tmp_path: Path) -> None:
    """As a shell script sees it: a real process, stdout JSON, stderr messages."""
    script = Path(sys.executable).with_name("memstore")
    env = {**os.environ, "MEMSTORE_URL": str(tmp_path / "mem"), "MEMSTORE_NAMESPACE": NS}
    env.pop("MEMSTORE_CONFIG", None)
    env.update(REFUSE_UNGROUNDED_ENV)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(script), *args], capture_output=True, text=True, env=env, timeout=300
        )

    stored = run("add", *PEANUTS, "-e", SAID, "--json")
    assert stored.returncode == 0, stored.stderr
    assert json.loads(stored.stdout)["stored"] is True
    rejected = run("add", *SHELLFISH, "-e", SAID, "--json")
    assert rejected.returncode == 3
    body = json.loads(rejected.stdout)
    assert body["stored"] is False and body["rejection"]["verdict"] == "insufficient_evidence"
    assert run("get", "nope").returncode == 2
    missing = run("--store", f"sqlite:///{tmp_path}/no/such/dir/x.db", "stats")
    assert missing.returncode == 2 and f"{tmp_path}/no/such/dir/x.db" in missing.stderr
    assert not (tmp_path / "no").exists()
    assert run("frobnicate").returncode == 2
