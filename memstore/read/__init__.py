"""Reads of memory: facts, history, verifications and counts (``facts``), the
hypergraph of active facts (``graph``), hybrid search over the index (``search``) and
recall for an agent's next turn (``recall``). It may import ``storage``, ``index``,
``audit`` (the refusals it counts) and the base modules; never ``write``, ``reverify``,
``memstore.store`` or the fronts."""
