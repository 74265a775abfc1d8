"""gate: the grounding verification engine (budget math, scrubbing, verifier backends).

No storage code lives here; ``memstore`` imports ``gate``, never the other way.
"""

import typing

# Eager (light, stdlib only): the function ``budget`` must win over its module's name.
from gate.budget import Budget, bernoulli_kl, budget
from gate.exports import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from gate.backends import CallControl, Cancelled, ModelLock, ScriptedBackend, VerifierBackend
    from gate.backends.registry import BACKENDS, create_backend
    from gate.claims import Claim, ClaimKind, extract_claims
    from gate.config import ConfigError, HallucinationConfig, MemoryGateConfig, load_config
    from gate.engine import Check, Gate, default_gate, verify_claim
    from gate.evidence import Citation, ContextItem, scrub
    from gate.outputs import (
        CitationFinding,
        ClaimResult,
        GroundingProfile,
        OutputReport,
        verify_claims,
    )
    from gate.policy import REFUSE_UNGROUNDED, GatePolicy, decide
    from gate.trace import StepResult, StepStatus, TraceReport, audit_trace
    from gate.verdict import Verdict, VerdictStatus

#: Each public name and the module that defines it: imported on first use, so importing
#: one light part (``gate.verdict``) loads neither the backends nor numpy.
_EXPORTS: dict[str, str] = {
    "BACKENDS": "gate.backends.registry",
    "CallControl": "gate.backends",
    "Cancelled": "gate.backends",
    "Check": "gate.engine",
    "Citation": "gate.evidence",
    "CitationFinding": "gate.outputs",
    "Claim": "gate.claims",
    "ClaimKind": "gate.claims",
    "ClaimResult": "gate.outputs",
    "ConfigError": "gate.config",
    "ContextItem": "gate.evidence",
    "Gate": "gate.engine",
    "GatePolicy": "gate.policy",
    "GroundingProfile": "gate.outputs",
    "HallucinationConfig": "gate.config",
    "MemoryGateConfig": "gate.config",
    "ModelLock": "gate.backends",
    "OutputReport": "gate.outputs",
    "REFUSE_UNGROUNDED": "gate.policy",
    "ScriptedBackend": "gate.backends",
    "StepResult": "gate.trace",
    "StepStatus": "gate.trace",
    "TraceReport": "gate.trace",
    "Verdict": "gate.verdict",
    "VerdictStatus": "gate.verdict",
    "VerifierBackend": "gate.backends",
    "audit_trace": "gate.trace",
    "create_backend": "gate.backends.registry",
    "decide": "gate.policy",
    "default_gate": "gate.engine",
    "extract_claims": "gate.claims",
    "load_config": "gate.config",
    "scrub": "gate.evidence",
    "verify_claim": "gate.engine",
    "verify_claims": "gate.outputs",
}


__getattr__, __dir__ = _lazy_exports("gate", _EXPORTS, globals())

__all__ = [  # noqa: RUF022 (plain sorted order, as tests/memstore/test_exported_members.py checks)
    "BACKENDS",
    "Budget",
    "CallControl",
    "Cancelled",
    "Check",
    "Citation",
    "CitationFinding",
    "Claim",
    "ClaimKind",
    "ClaimResult",
    "ConfigError",
    "ContextItem",
    "Gate",
    "GatePolicy",
    "GroundingProfile",
    "HallucinationConfig",
    "MemoryGateConfig",
    "ModelLock",
    "OutputReport",
    "REFUSE_UNGROUNDED",
    "ScriptedBackend",
    "StepResult",
    "StepStatus",
    "TraceReport",
    "Verdict",
    "VerdictStatus",
    "VerifierBackend",
    "audit_trace",
    "bernoulli_kl",
    "budget",
    "create_backend",
    "decide",
    "default_gate",
    "extract_claims",
    "load_config",
    "scrub",
    "verify_claim",
    "verify_claims",
]
