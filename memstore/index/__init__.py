"""The search index, kept in line with SQL: the outbox of changes (``outbox``), where
the index lives and whether search can run (``handle``), LanceDB itself (``lance``,
``lancedb_import``, ``object_store`` for ``s3://``), what a row holds (``rows``), the
embedder (``embeddings``) and the background index writer (``writer``). A write reaches
the index through ``outbox.enqueue``. It may import ``memstore.storage`` and the base
modules; never the write, read or audit layers above it."""
