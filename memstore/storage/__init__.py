"""SQL, the source of truth: the tables (``tables``), engines and migrations (``db``),
one namespace's sessions and lookups (``scope``), page cursors, locks between processes,
SQLite's planner statistics and write-ahead log, the re-verification schedule
(``schedule``: when a fact is next due) and questions put to a database without a Store
(``probes``). It may import the base modules (``memstore.errors``,
``names``, ``metadata``, ``schemas``, ``defaults``) and nothing else of memstore."""
