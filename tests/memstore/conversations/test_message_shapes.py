"""Messages as agent frameworks send them: OpenAI chat messages (content parts, null
content with tool calls, tool results, the developer role, fields memstore does not
read) and mem0's ``{"role", "content"}``; user turns without a name belong to the
call's ``user_name`` (or the ``conversations.user_name`` setting) on every front."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from rest_server import ALICE_KEY, KEYS, serving
from scripted import supports_its_own_words
from typer.testing import CliRunner

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from memstore import InvalidInput
from memstore.cli import Exit, app
from memstore.config import ConversationSettings, Settings, load_settings
from memstore.conversations import EmbeddedExtractor, Message, parse_messages
from memstore.mcp import server as mcp_server
from memstore.rest import create_app

NS = "user:maya"
RULE_GATE = Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED)  # type: ignore[arg-type]
#: A turn of an OpenAI chat, as the SDK returns and agents send it back.
OPENAI_TURNS: list[dict[str, Any]] = [
    {"role": "developer", "content": "You are a helpful assistant."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "I live in Boston."},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "annotations": [],
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Boston"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 3}'},
    {"role": "assistant", "content": "It is 3 degrees in Boston.", "audio": None},
]
MEM0_TURN = {"role": "user", "content": "I'm allergic to peanuts."}


def test_openai_messages_are_read_as_sent() -> None:
    system, user, call, result, answer = parse_messages(OPENAI_TURNS)
    assert (system.role, system.content) == ("system", "You are a helpful assistant.")
    assert user.content == "I live in Boston."  # the image part carries no text
    assert call.role == "assistant"
    assert call.content == 'called get_weather with {"city": "Boston"}'
    assert (result.role, result.tool_call_id, result.content) == ("tool", "call_1", '{"temp_c": 3}')
    assert answer.rendered() == "Assistant: It is 3 degrees in Boston."


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"role": "assistant", "content": None}, "must hold text"),
        ({"role": "user", "content": [{"type": "text"}]}, "needs its text"),
        ({"role": "user", "content": 5}, "list of content parts"),
        ({"role": "assistant", "content": None, "tool_calls": [{"id": "x"}]}, "function.name"),
        ({"role": "critic", "content": "x"}, "role"),
        ({"role": "user", "content": [{"type": ["text"], "text": "x"}]}, "must hold text"),
    ],
)
def test_a_message_that_cannot_be_read_names_what_is_wrong(raw: dict[str, Any], says: str) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_messages([raw])
    assert err.value.field.startswith("messages.0") and says in str(err.value)


def test_user_turns_without_a_name_are_the_named_users() -> None:
    named = parse_messages([MEM0_TURN, {"role": "user", "name": "Bob", "content": "Hi."}], "Maya")
    assert [m.speaker for m in named] == ["Maya", "Bob"]
    assert parse_messages([MEM0_TURN])[0].speaker == "the user"
    [candidate] = EmbeddedExtractor().extract(parse_messages([MEM0_TURN], "Maya"))
    assert candidate.statement == "Maya is allergic to peanuts."
    for bad in ("  ", "x" * 257, ["Maya"]):
        with pytest.raises(InvalidInput) as err:
            parse_messages([MEM0_TURN], bad)  # type: ignore[arg-type]
        assert err.value.field == "user_name"


def test_a_turn_labelled_in_its_text_is_the_labels_speakers() -> None:
    turns = parse_messages(
        [
            {"role": "user", "content": "Caroline: I went to a pottery class yesterday."},
            {"role": "assistant", "content": "Melanie: I painted a lake last year."},
            {"role": "user", "content": "Note: call the bank."},  # a label of no one
            {"role": "user", "content": "Correction: I live at 21 Elm Street."},
            {"role": "user", "name": "Ana", "content": "Bo: hi"},  # a name wins
            {"role": "user", "content": "Caroline: Hi!\nMelanie: Hello."},  # two turns
        ],
        "Maya",
    )
    assert [(m.speaker, m.role) for m in turns] == [
        ("Caroline", "user"),
        ("Melanie", "user"),
        ("Maya", "user"),
        ("Maya", "user"),
        ("Ana", "user"),
        ("Maya", "user"),
    ]
    assert turns[0].rendered() == "Caroline: I went to a pottery class yesterday."
    found = EmbeddedExtractor().extract(turns[:2])
    assert [c.statement for c in found] == [
        "Caroline went to a pottery class yesterday.",
        "Melanie painted a lake last year.",
    ]


def test_a_label_that_says_what_happened_names_no_speaker() -> None:
    turns = parse_messages(
        [
            {"role": "assistant", "content": "Done: a reminder to call the dentist on Friday."},
            {"role": "assistant", "content": "Confirmed: your table for two at 8 pm."},
            {"role": "user", "content": "Okay: noted, thanks."},
            {"role": "user", "content": "Grace: I went to the market."},  # names stay names
            {"role": "user", "content": "Rose: my cat is sick."},
            {"role": "user", "content": "Lily: I'm allergic to peanuts."},
            {"role": "user", "content": "Sunny: I live in Leeds."},
        ],
        "Maya",
    )
    assert [(m.speaker, m.role) for m in turns] == [
        ("the assistant", "assistant"),
        ("the assistant", "assistant"),
        ("Maya", "user"),
        ("Grace", "user"),
        ("Rose", "user"),
        ("Lily", "user"),
        ("Sunny", "user"),
    ]
    assert not any("Done" in c.statement for c in EmbeddedExtractor().extract(turns))


def test_a_message_model_ignores_fields_it_does_not_read() -> None:
    message = Message.model_validate({**MEM0_TURN, "mood": "happy", "id": "msg_1"})
    assert message.content == "I'm allergic to peanuts." and not hasattr(message, "mood")


def test_python_remembers_an_openai_conversation_for_the_user(tmp_path: Path) -> None:
    with memstore.open(tmp_path / "mem", NS, gate=RULE_GATE) as store:
        report = store.remember_conversation(OPENAI_TURNS, user_name="Maya")
        assert [c.statement for c in report.candidates] == ["Maya lives in Boston."]
        assert [f.statement for f in store.facts_about("Maya")] == ["Maya lives in Boston."]


@pytest.fixture
def rule_gate() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Settings, "gate", lambda self: RULE_GATE)
        yield


def test_rest_takes_openai_messages_and_the_settings_user_name(
    tmp_path: Path, rule_gate: None
) -> None:
    data = tmp_path / "memdata"
    settings = load_settings(
        store={"url": str(data)},
        server={"api_keys": {**KEYS, ALICE_KEY: [NS]}},
        conversations={"user_name": "Maya"},
    )
    with serving(create_app(settings)) as base:
        headers = {"Authorization": f"Bearer {ALICE_KEY}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            done = client.post(
                f"/v1/namespaces/{NS}/conversations", json={"messages": OPENAI_TURNS}
            )
            assert done.status_code == 200, done.text
            assert [c["statement"] for c in done.json()["candidates"]] == ["Maya lives in Boston."]
            other = client.post(
                f"/v1/namespaces/{NS}/conversations",
                json={"messages": [MEM0_TURN], "user_name": "Zoe"},
            )
            assert [c["statement"] for c in other.json()["candidates"]] == [
                "Zoe is allergic to peanuts."
            ]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_takes_openai_messages_and_a_user_name(tmp_path: Path) -> None:
    with memstore.open(tmp_path / "mem", NS, gate=RULE_GATE) as store:
        server = mcp_server.build_server(store, conversations=ConversationSettings())
        async with Client(server) as client:
            result = await client.call_tool(
                "remember_conversation", {"messages": OPENAI_TURNS, "user_name": "Maya"}
            )
        assert not result.is_error, result.content
        assert result.structured_content is not None
        [only] = result.structured_content["candidates"]
        assert only["statement"] == "Maya lives in Boston."


def test_cli_takes_openai_messages_and_a_user_name(tmp_path: Path, rule_gate: None) -> None:
    where = str(tmp_path / "mem")
    env = {"MEMSTORE_URL": None, "MEMSTORE_NAMESPACE": None, "MEMSTORE_CONFIG": None}
    done = CliRunner().invoke(
        app,
        ["--store", where, "-n", NS, "remember-conversation", "--user-name", "Maya", "--json"],
        input=json.dumps(OPENAI_TURNS),
        env=env,
    )
    assert done.exit_code == Exit.OK, done.output
    [only] = json.loads(done.stdout)["candidates"]
    assert only["statement"] == "Maya lives in Boston."
