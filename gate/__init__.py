"""gate: the grounding verification engine (budget math, scrubbing, verifier backends).

No storage code lives here; ``memstore`` imports ``gate``, never the other way.
"""

from gate.backends import CallControl, Cancelled, ModelLock, ScriptedBackend, VerifierBackend
from gate.backends.registry import BACKENDS, create_backend
from gate.budget import Budget, bernoulli_kl, budget
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
from gate.policy import GatePolicy, decide
from gate.trace import StepResult, StepStatus, TraceReport, audit_trace
from gate.verdict import Verdict, VerdictStatus

__all__ = [
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
