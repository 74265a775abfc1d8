"""``python -m memstore.cli``: the ``memstore`` command."""

from memstore.cli import main

main()
