"""The names and numbers the fronts (CLI, REST, MCP) show in their options and help:
environment variables, page sizes and bounds.

Standard library only, so ``memstore --help`` can show them without loading the store,
the index or a model; the modules that use them (``config``, ``schemas``, ``inputs``,
``recall``, ``db``) import them from here.
"""

from __future__ import annotations

#: Environment variables that name a config file and the store (the CLI reads them too).
CONFIG_ENV = "MEMSTORE_CONFIG"
URL_ENV = "MEMSTORE_URL"
NAMESPACE_ENV = "MEMSTORE_NAMESPACE"

#: Facts one page of ``Store.list_facts`` holds: by default, and at most.
DEFAULT_LIST_LIMIT = 50
MAX_LIST_LIMIT = 1_000
#: Facts one page of ``facts_about``, ``history`` and ``neighborhood`` holds by default
#: (at most ``MAX_LIST_LIMIT``).
DEFAULT_READ_LIMIT = 100
#: The facts a ``neighborhood`` walk keeps, nearest and newest first: by default, at most.
DEFAULT_NEIGHBORHOOD_FACTS = 1_000
MAX_NEIGHBORHOOD_FACTS = 100_000

#: The largest token budget of one ``Store.recall``.
MAX_RECALL_TOKENS = 100_000
#: The relevance (cosine similarity of query and statement, see ``SearchHit``) a memory
#: needs to be recalled. Chosen on the agent-memory dev split by
#: ``bench/recall_threshold.py`` (``bench/results/recall_threshold.json``): the 99th
#: percentile of the relevance of memories about another situation than the query's
#: (17,600 pairs), rounded up, so about 1% of unrelated memories pass it. It keeps 74%
#: of the memories about the query's own situation when the query is another fact
#: about it, and 92% when the query is the message that stated them. Measured with the
#: packaged MiniLM: with another embedder, pass a ``min_score`` of its own.
DEFAULT_MIN_SCORE = 0.32
#: Tokens a recall's block may hold unless told otherwise.
DEFAULT_BUDGET_TOKENS = 512
#: Memories a recall considers (best first) before the budget cuts the block.
DEFAULT_K = 20

#: Ids per ``IN (...)`` list; stays under every backend's parameter limit.
IN_LIST_CHUNK = 500

#: Relations where a newer fact about the same subject replaces the older one in
#: ``remember_conversation`` (``conversations.single_valued``): where one lives, works,
#: what one eats, whom one reports to. The embedded extractor finds each by its
#: phrasings (``memstore.conversations.extractors.RELATIONS``).
SINGLE_VALUED = ("diet", "lives_in", "manager", "works_at")
#: What ``Store.rejections`` may order by, the most one page holds, and the formats of
#: ``export_rejections``.
REJECTION_ORDER_BY = ("created_at", "budget_gap", "p1", "p0", "observed_bits", "required_bits")
REJECTIONS_MAX_PAGE = 1_000
REJECTION_EXPORT_FORMATS = ("jsonl", "csv")
#: How far a neighbourhood walks (``Store.neighborhood``'s ``hops``).
MAX_HOPS = 10
#: The most due facts one ``Store.reverify`` call checks.
MAX_REVERIFY_LIMIT = 100_000
#: The most facts one ``add_facts`` call, or claims one ``remember`` call, may carry.
MAX_BATCH = 1_000
