"""gate: the grounding verification engine (budget math, scrubbing, verifier backends).

No storage code lives here; ``memstore`` imports ``gate``, never the other way.
"""

from gate.backends import ScriptedBackend, VerifierBackend
from gate.budget import Budget, bernoulli_kl, budget
from gate.config import ConfigError, HallucinationConfig, MemoryGateConfig, load_config
from gate.engine import Check, Gate
from gate.evidence import Citation, ContextItem, scrub
from gate.policy import GatePolicy, decide
from gate.verdict import Verdict, VerdictStatus

__all__ = [
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
    "decide",
    "load_config",
    "scrub",
]
