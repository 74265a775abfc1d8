"""Which write hook decides a write: the store's, one call's gate settings, or none.

Also the one place a hook is asked for its answers (``admit``), which must come
back one per candidate.
"""

from __future__ import annotations

from gate import Gate, GatePolicy, Verdict, default_gate
from memstore.admission import Admission, Candidate, Ungated, WriteHook, answers
from memstore.errors import InvalidInput
from memstore.gating import GateHook
from memstore.limits import Limits
from memstore.schemas import ClaimCheck


def gate_of(gate: Gate | str | None) -> Gate | None:
    """A ``gate.Gate`` from a gate or a backend name (None: the default gate)."""
    if gate is None or isinstance(gate, Gate):
        return gate
    if isinstance(gate, str):
        try:
            return Gate(gate)
        except (ValueError, ImportError) as exc:
            raise InvalidInput("gate", str(exc)) from None
    raise InvalidInput("gate", f"must be a gate.Gate or a backend name, got {type(gate).__name__}")


def policy_of(policy: GatePolicy | None) -> GatePolicy | None:
    """A ``gate.GatePolicy``, or None for the gate's own."""
    if policy is None or isinstance(policy, GatePolicy):
        return policy
    raise InvalidInput("policy", f"must be a gate.GatePolicy, got {type(policy).__name__}")


def store_hook(
    gate: Gate | str | None, policy: GatePolicy | None, hook: WriteHook | None
) -> WriteHook:
    """A store's write hook: the given hook, or the grounding gate with its settings."""
    if hook is None:
        return GateHook(gate_of(gate), policy_of(policy))
    if gate is not None or policy is not None:
        raise InvalidInput("hook", "give a write hook or gate settings (gate, policy), not both")
    if not isinstance(hook, WriteHook):
        raise InvalidInput(
            "hook", f"must be a WriteHook (with admit_many), got {type(hook).__name__}"
        )
    return hook


def call_hook(
    hook: WriteHook, gate: Gate | str | None, policy: GatePolicy | None, ungated: bool
) -> WriteHook:
    """The write hook of one call: the store's ``hook``, or it with per-call gate settings."""
    if not isinstance(ungated, bool):
        raise InvalidInput("ungated", "must be True or False")
    if ungated:
        if gate is not None or policy is not None:
            raise InvalidInput("ungated", "an ungated write takes no gate or policy")
        return Ungated()
    if gate is None and policy is None:
        return hook
    if isinstance(hook, GateHook):
        return hook.with_settings(gate_of(gate), policy_of(policy))
    if gate is None:
        raise InvalidInput("policy", "this store's write hook is not the gate; pass gate= too")
    return GateHook(gate_of(gate), policy_of(policy))


def reverify_hook(hook: WriteHook, gate: Gate | str | None, policy: GatePolicy | None) -> GateHook:
    """The gate re-verification uses: the store's (or its configured recheck gate), with
    per-run settings if given."""
    if isinstance(hook, GateHook):
        if gate is None and policy is None:
            recheck = hook.recheck_gate  # a stronger verifier configured for rechecks
            return hook if recheck is None else hook.with_settings(recheck)
        return hook.with_settings(gate_of(gate), policy_of(policy))
    return GateHook(gate_of(gate), policy_of(policy))


def check_claim(hook: WriteHook, limits: Limits, check: ClaimCheck) -> Verdict:
    """The gate's verdict on a claim, from a store with this write hook: its own gate,
    or the process-wide embedded gate when its writes are not gated."""
    gate = hook.gate if isinstance(hook, GateHook) else default_gate()
    policy = hook.policy if isinstance(hook, GateHook) else None
    texts = [item.text for item in check.evidence]
    limits.check_texts(texts, "evidence")
    return gate.check(check.claim, texts, confidence=check.confidence, policy=policy)


def admit(hook: WriteHook, candidates: list[Candidate]) -> list[Admission]:
    """The hook's answer for each candidate, in order."""
    if not candidates:
        return []
    return answers(hook, candidates)
