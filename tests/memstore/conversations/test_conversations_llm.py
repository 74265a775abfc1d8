"""The llm extractor: a scripted endpoint for each edge case, then the real llama.cpp server."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai_servers import Reply, scripted, silent_server

import memstore
from gate import Gate
from gate.backends.llama_server import MODEL
from gate.backends.llama_server import llama_server as start_llama_server
from gate.backends.openai import OpenAIBackend
from language.prompts import FACTS_SCHEMA
from memstore import Store
from memstore.conversations import Extractor, LLMExtractor, parse_messages
from memstore.conversations.llm import (
    API_KEY_ENV,
    ExtractorError,
    locate,
)
from memstore.errors import MemstoreError

CONVERSATION = parse_messages(
    [
        {"role": "user", "name": "Alice", "content": "Hi! So you know, I'm allergic to peanuts."},
        {"role": "assistant", "content": "Thanks, I'll remember that."},
        {"role": "user", "name": "Bob", "content": "I moved to Paris in 2021 and I work at Acme."},
    ]
)
ALICE = {"name": "Alice", "kind": "person", "role": "subject"}
PEANUTS = {"name": "peanuts", "kind": "food", "role": "object"}


def fact(**overrides: Any) -> dict[str, Any]:
    """A fact as a model answers it: Alice's allergy, from message 0."""
    item: dict[str, Any] = {
        "statement": "Alice is allergic to peanuts.",
        "members": [ALICE, PEANUTS],
        "relation": "allergic_to",
        "valid_from": None,
        "messages": [0],
        "quote": "I'm allergic to peanuts.",
    }
    return item | overrides


def answer(*facts: dict[str, Any]) -> Reply:
    return Reply(content=json.dumps({"facts": list(facts)}))


def extractor(url: str, **options: Any) -> LLMExtractor:
    defaults: dict[str, Any] = {"timeout": 5.0, "retries": 0, "backoff": 0.01, "api_key": "k"}
    return LLMExtractor("m", base_url=url, **(defaults | options))


def run(*replies: Reply, **options: Any) -> tuple[list[Any], LLMExtractor]:
    with scripted(*replies) as server, extractor(server.url, **options) as ex:
        return ex.extract(CONVERSATION), ex


# -- the request ----------------------------------------------------------------------


def test_it_is_an_extractor() -> None:
    assert isinstance(LLMExtractor("m"), Extractor) and LLMExtractor.name == "llm"
    assert isinstance(ExtractorError("x"), MemstoreError)


def test_the_request_carries_the_schema_the_numbered_messages_and_the_key() -> None:
    with (
        scripted(answer(fact())) as server,
        LLMExtractor("m", base_url=server.url, api_key="sk-test", max_tokens=300) as ex,
    ):
        assert [c.statement for c in ex.extract(CONVERSATION)] == ["Alice is allergic to peanuts."]
    request, headers = server.requests[0], server.headers[0]
    assert headers["authorization"] == "Bearer sk-test"
    assert request["model"] == "m" and request["max_tokens"] == 300
    assert request["temperature"] == 0.0
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "facts", "schema": FACTS_SCHEMA},
    }
    prompt = request["messages"][-1]["content"]
    assert "[0] Alice (user): Hi! So you know, I'm allergic to peanuts." in prompt
    assert "[1] assistant: Thanks, I'll remember that." in prompt
    assert "[2] Bob (user): I moved to Paris" in prompt
    assert "sk-test" not in repr(ex)


def test_the_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "from-env")
    with scripted(answer()) as server, LLMExtractor("m", base_url=server.url) as ex:
        ex.extract(CONVERSATION)
    monkeypatch.delenv(API_KEY_ENV)
    with scripted(answer()) as bare, LLMExtractor("m", base_url=bare.url) as ex:
        ex.extract(CONVERSATION)
    assert server.headers[0]["authorization"] == "Bearer from-env"
    assert "authorization" not in bare.headers[0]


def test_json_object_sends_the_schema_in_llama_cpp_pythons_form() -> None:
    with scripted(answer()) as server:
        ex = extractor(server.url, response_format="json_object")
        ex.extract(CONVERSATION)
    assert ex.format_in_use == "json_object"
    assert server.requests[0]["response_format"] == {"type": "json_object", "schema": FACTS_SCHEMA}


def test_auto_falls_back_when_the_server_refuses_json_schema() -> None:
    # what llama-cpp-python's server answers to {"type": "json_schema", ...}
    refusal = {"error": {"message": "response_format.type: Input should be 'text' or "
                         "'json_object'", "input": "json_schema"}}  # fmt: skip
    with scripted(Reply(status=500, body=refusal), answer(fact())) as server:
        ex = extractor(server.url)
        assert len(ex.extract(CONVERSATION)) == 1
        ex.extract(CONVERSATION)  # remembered: no second refusal
    formats = [r["response_format"]["type"] for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]


def test_the_window_keeps_the_newest_messages_and_cites_only_those() -> None:
    many = parse_messages(
        [{"role": "user", "name": "Alice", "content": f"I own {n} cats."} for n in range(10)]
    )
    ex = LLMExtractor("m", max_messages=3)
    shown, text = ex.window(many)
    assert shown == [7, 8, 9] and text.startswith("(messages 0 to 6 are not shown)\n[7] ")
    shown, text = LLMExtractor("m", max_chars=40).window(many)
    assert shown == [9]
    long = parse_messages([{"role": "user", "content": "x" * 500}])
    assert LLMExtractor("m", max_chars=50).window(long)[1] == "[0] user: " + "x" * 40 + " ..."
    old = fact(statement="Alice owns 1 cats.", messages=[1], quote="I own 1 cats.")
    new = fact(statement="Alice owns 9 cats.", messages=[9], quote="I own 9 cats.")
    with scripted(answer(old, new)) as server:
        ex = extractor(server.url, max_messages=3)
        assert [c.message for c in ex.extract(many)] == [9]
    assert ex.last_errors == ["fact 0: message index 1 is not one of the 3 sent"]


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="response_format"):
        LLMExtractor("m", response_format="xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_messages"):
        LLMExtractor("m", max_messages=0)


# -- bad model output: dropped, never raised -------------------------------------------


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("Alice is allergic to peanuts.", "not valid JSON"),
        ('{"facts": [{"statement": "Alice is', "not valid JSON (cut at max_tokens=1024)"),
        ('{"facts": "Alice"}', "no list of facts"),
        ("42", "no list of facts"),
        ("", "not valid JSON"),
    ],
)
def test_an_unusable_answer_gives_nothing_and_says_why(content: str, why: str) -> None:
    finish = "length" if "cut" in why else "stop"
    candidates, ex = run(Reply(content=content, finish_reason=finish))
    assert candidates == []
    assert len(ex.last_errors) == 1 and why in ex.last_errors[0]
    assert ex.last_answer == content


def test_a_fenced_answer_and_a_bare_list_are_read() -> None:
    fenced = Reply(content="```json\n" + json.dumps({"facts": [fact()]}) + "\n```")
    assert len(run(fenced)[0]) == 1
    assert len(run(Reply(content=json.dumps([fact()])))[0]) == 1
    # a grammar may let a raw newline into a string, which strict JSON does not allow
    raw = json.dumps({"facts": [fact(statement="Alice is allergic\nto peanuts.")]})
    (candidate,), _ = run(Reply(content=raw.replace("\\n", "\n")))
    assert candidate.statement == "Alice is allergic to peanuts."


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (fact(statement=""), "statement"),
        (fact(statement=" ... "), "empty statement"),
        (fact(members=[]), "members"),
        (fact(members=[{"name": "Alice", "kind": "person"}]), "members.0.role"),
        (fact(members=[{"name": " ", "kind": "person", "role": "subject"}]), "members.0.name"),
        (fact(messages=[]), "messages"),
        (fact(messages=["first"]), "messages.0"),
        (fact(quote=""), "quote"),
        ({k: v for k, v in fact().items() if k != "statement"}, "statement"),
        ("Alice is allergic to peanuts.", "does not fit the schema"),
        (fact(statement="x" * 5000), "statement"),
    ],
)
def test_schema_violating_facts_are_dropped(bad: Any, why: str) -> None:
    candidates, ex = run(answer(bad, fact(statement="Alice avoids peanuts.")))
    assert [c.statement for c in candidates] == ["Alice avoids peanuts."]
    assert len(ex.last_errors) == 1 and ex.last_errors[0].startswith("fact 0: ")
    assert why in ex.last_errors[0]


@pytest.mark.parametrize("messages", [[3], [-1], [0, 7], [99]])
def test_out_of_range_message_indexes_drop_the_fact(messages: list[int]) -> None:
    candidates, ex = run(answer(fact(messages=messages)))
    assert candidates == [] and "is not one of the 3 sent" in ex.last_errors[0]


@pytest.mark.parametrize(
    "quote",
    [
        "I'm allergic to shellfish.",  # misheard
        "I moved to Paris in 2021",  # Bob's words, not Alice's message
        "Alice is allergic to peanuts.",  # the statement, not the message
    ],
)
def test_a_quote_not_in_its_message_drops_the_fact(quote: str) -> None:
    candidates, ex = run(answer(fact(quote=quote)))
    assert candidates == [] and "is not in message 0" in ex.last_errors[0]


@pytest.mark.parametrize(
    "quote",
    [
        "i'm  allergic\nto PEANUTS",
        "I\u2019m allergic to peanuts.",
        "[0] Alice (user): I'm allergic to peanuts.",
        '"I\'m allergic to peanuts."',
    ],
)
def test_a_loosely_copied_quote_is_replaced_by_the_messages_own_text(quote: str) -> None:
    (candidate,), _ = run(answer(fact(quote=quote)))
    assert candidate.quote in CONVERSATION[0].content
    assert candidate.quote.lower().startswith("i'm allergic to peanuts")


def test_locate() -> None:
    assert locate("allergic", CONVERSATION[0]) == "allergic"
    assert locate("  ", CONVERSATION[0]) is None
    assert locate("!", CONVERSATION[0]) is None
    assert locate("Alice (user):", CONVERSATION[0]) is None


def test_a_candidate_has_its_subject_first_its_other_messages_and_its_time() -> None:
    bob = {"name": "Bob", "kind": "person", "role": "subject"}
    paris = {"name": "Paris", "kind": "place", "role": "location"}
    item = fact(
        statement="Bob lives in Paris.",
        members=[paris, bob, bob],
        relation="Lives In",
        valid_from="2021-01-01",
        messages=[2, 0, 2],
        quote="I moved to Paris in 2021",
    )
    (candidate,), _ = run(answer(item))
    assert candidate.members == (("Bob", "person", "subject"), ("Paris", "place", "location"))
    assert (candidate.message, candidate.also, candidate.relation) == (2, (0,), "lives_in")
    assert candidate.valid_from is not None and candidate.valid_from.isoformat() == (
        "2021-01-01T00:00:00+00:00"
    )
    (alice,), ex = run(answer(fact(relation="42", valid_from="last spring")))
    assert alice.relation is None and alice.valid_from is None
    assert ex.last_errors == ["valid_from 'last spring' is not an ISO time; left out"]


def test_repeated_facts_and_facts_over_the_limit_are_left_out() -> None:
    candidates, ex = run(answer(fact(), fact(statement="alice is allergic to peanuts")))
    assert len(candidates) == 1 and ex.last_errors == ["fact 1: repeats an earlier fact"]
    more = [fact(statement=f"Alice is allergic to peanuts {n}.") for n in range(5)]
    candidates, ex = run(answer(*more), max_facts=2)
    assert len(candidates) == 2 and ex.last_errors == ["3 facts over max_facts ignored"]


# -- the endpoint failing: ExtractorError ----------------------------------------------


def test_a_503_is_retried_with_backoff() -> None:
    busy = Reply(status=503, body={"error": {"message": "overloaded"}})
    with scripted(busy, busy, answer(fact())) as server:
        assert len(extractor(server.url, retries=2).extract(CONVERSATION)) == 1
    assert len(server.requests) == 3


def test_a_server_that_stays_down_raises_after_the_retries() -> None:
    busy = Reply(status=503, body={"error": {"message": "overloaded"}})
    with (
        scripted(busy) as server,
        pytest.raises(ExtractorError, match=r"HTTP 503 \(2 attempts\)"),
    ):
        extractor(server.url, retries=1).extract(CONVERSATION)
    assert len(server.requests) == 2


def test_an_http_error_that_retrying_cannot_fix_is_raised_at_once() -> None:
    denied = Reply(status=401, body={"error": {"message": "invalid api key"}})
    with scripted(denied) as server, pytest.raises(ExtractorError, match=r"HTTP 401.*invalid api"):
        extractor(server.url, retries=3).extract(CONVERSATION)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body="<html>gateway</html>", raw=True),
        Reply(body={"object": "error"}),
        Reply(body=[1, 2]),
    ],
)
def test_an_answer_that_is_not_a_chat_completion_raises(reply: Reply) -> None:
    with scripted(reply) as server, pytest.raises(ExtractorError, match="extractor endpoint"):
        extractor(server.url).extract(CONVERSATION)


def test_a_silent_server_times_out() -> None:
    with silent_server() as url:
        started = time.perf_counter()
        with pytest.raises(ExtractorError, match=r"did not answer within 0.3s \(2 attempts\)"):
            extractor(url, timeout=0.3, retries=1).extract(CONVERSATION)
        assert time.perf_counter() - started < 5.0


def test_an_unreachable_server_raises() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens
    with pytest.raises(ExtractorError, match="could not be reached"):
        extractor(f"http://127.0.0.1:{port}/v1").extract(CONVERSATION)


# -- through the gate -------------------------------------------------------------------


def test_each_fact_goes_through_the_gate(words_store: Store) -> None:
    misheard = fact(statement="Alice is allergic to shellfish.")
    with scripted(answer(fact(), misheard)) as server:
        report = words_store.remember_conversation(CONVERSATION, extractor=extractor(server.url))
    assert report.extractor == "llm"
    assert [c.outcome for c in report.candidates] == ["stored", "refused"]
    assert [f.statement for f in words_store.facts_about("Alice")] == [
        "Alice is allergic to peanuts."
    ]
    assert [r.statement for r in words_store.rejections()] == ["Alice is allergic to shellfish."]


def test_a_conversation_longer_than_the_window_is_read_whole(words_store: Store) -> None:
    """The extractor sends its newest ``max_messages``; a longer conversation is read in
    parts of that many, so no message goes unread and the facts keep their numbers."""
    chat = [*CONVERSATION, *CONVERSATION]  # six messages, windows of two
    bob = fact(
        statement="Bob moved to Paris in 2021.",
        members=[{"name": "Bob", "kind": "person", "role": "subject"}],
        relation=None,
        messages=[0],
        quote="I moved to Paris in 2021",
    )
    replies = [answer(fact()), answer(bob), answer()]  # messages 0-1, 2-3, 4-5
    with scripted(*replies) as server:
        ex = extractor(server.url, max_messages=2)
        report = words_store.remember_conversation(chat, extractor=ex)
    prompts = [r["messages"][-1]["content"] for r in server.requests]
    assert len(prompts) == 3 and not any("not shown" in p for p in prompts)
    assert [(c.statement, c.message) for c in report.candidates] == [
        ("Alice is allergic to peanuts.", 0),
        ("Bob moved to Paris in 2021.", 2),
    ]


def test_a_failing_endpoint_writes_nothing(words_store: Store) -> None:
    busy = Reply(status=503, body={"error": {"message": "overloaded"}})
    with scripted(busy) as server, pytest.raises(ExtractorError):
        words_store.remember_conversation(CONVERSATION, extractor=extractor(server.url))
    assert words_store.stats().facts == {} and words_store.rejections() == []


# -- the real llama.cpp server -----------------------------------------------------------


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_llama_server(tmp_path_factory.mktemp("llama")) as url:
        yield url


def test_real_llama_cpp_server(llama_server: str, data_dir: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    messages = CONVERSATION
    ex = LLMExtractor(
        MODEL, base_url=llama_server, timeout=300, retries=0, max_facts=2, max_tokens=400
    )
    verifier = OpenAIBackend(MODEL, base_url=llama_server, mode="logprobs", timeout=120)
    with ex, verifier, memstore.open(data_dir, gate=Gate(verifier, deadline=300)) as store:
        report = store.remember_conversation(messages, extractor=ex)
        assert ex.last_answer is not None
        jsonschema.validate(json.loads(ex.last_answer), FACTS_SCHEMA)  # through the grammar
        assert not any("JSON" in e or "list of facts" in e for e in ex.last_errors)
        assert ex.format_in_use == "json_object"  # the json_schema form was refused
        refused = {r.id for r in store.rejections()}
        for outcome in report.candidates:
            assert 0 <= outcome.message < len(messages)
            assert outcome.quote and outcome.quote in messages[outcome.message].content
            assert outcome.outcome in {"stored", "refused", "duplicate"}
            if outcome.outcome == "refused":
                assert outcome.rejection is not None and outcome.rejection.id in refused
            else:
                assert outcome.fact is not None and store.get_fact(outcome.fact.id)
