"""The write path: a fact becomes memory here. ``hook`` is where a write is gated (the
``WriteHook`` contract, the grounding gate as ``GateHook``, and which hook decides a
call); ``path`` runs a batch through the hook into SQL and queues it for the index;
``evidence``, ``entities``, ``duplicates`` and ``cache`` prepare what a batch writes;
``remember`` splits an agent's text into claims; ``forgetting`` retracts and erases.
It may import ``storage``, ``index``, ``audit`` (a refusal is recorded there),
``reverify.run`` (a written fact's first check date) and the base modules; never
``memstore.store`` or the fronts."""
