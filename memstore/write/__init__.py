"""The write path: a fact becomes memory here. ``hook`` is where a write is gated (the
``WriteHook`` contract, the grounding gate as ``GateHook``, and which hook decides a
call); ``path`` runs a batch through the hook into SQL and queues it for the index;
``refusals`` records a refused write in the audit log; ``evidence``, ``entities``,
``duplicates`` and ``cache`` prepare what a batch writes; ``remember`` splits an agent's
text into claims; ``forgetting`` retracts and erases. It may import ``storage`` (the
re-verification schedule a new fact starts on is ``storage.schedule``), ``index``,
``audit`` and the base modules; never ``read``, ``reverify``, ``memstore.store`` or the
fronts."""
