"""gate: the grounding verification engine (budget math, scrubbing, verifier backends).

No storage code lives here; ``memstore`` imports ``gate``, never the other way.
"""

__all__: list[str] = []
