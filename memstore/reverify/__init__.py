"""Re-verification: stored facts checked again against refreshed evidence. ``run``
claims due facts with a lease and re-runs the gate; ``namespace`` holds one store's
schedule policy; ``background`` (a thread of one process) and ``scheduler`` (a worker
with a persisted schedule) run it periodically; ``providers``, ``sources`` and
``source_policy`` fetch evidence and bound what may be fetched or cited; ``reviews``
lets a held fact earn trust (a person's review, later evidence). It may import
``storage``, ``index``, ``write``, ``audit`` and the base modules; never
``memstore.store``: a schedule runs whatever store it is handed."""
