"""gate: the grounding verification engine (budget math, scrubbing, verifier backends).

No storage code lives here; ``memstore`` imports ``gate``, never the other way.
"""

from gate.backends import ScriptedBackend, VerifierBackend
from gate.backends.registry import BACKENDS, create_backend
from gate.budget import Budget, bernoulli_kl, budget
from gate.config import ConfigError, HallucinationConfig, MemoryGateConfig, load_config
from gate.engine import Check, Gate, default_gate, verify_claim
from gate.evidence import Citation, ContextItem, scrub
from gate.policy import GatePolicy, decide
from gate.verdict import Verdict, VerdictStatus

__all__ = [
    "BACKENDS",
    "Budget",
    "Check",
    "Citation",
    "ConfigError",
    "ContextItem",
    "Gate",
    "GatePolicy",
    "HallucinationConfig",
    "MemoryGateConfig",
    "ScriptedBackend",
    "Verdict",
    "VerdictStatus",
    "VerifierBackend",
    "bernoulli_kl",
    "budget",
    "create_backend",
    "decide",
    "default_gate",
    "load_config",
    "scrub",
    "verify_claim",
]
