"""The evaluation of each build and the code location that runs it with the indexer.

- ``assets``: the ``evaluations`` asset, which asks a build's questions through the query
  side (``graphrag_query.evaluation``) before the build is published.
- ``build``: the code location's definitions for given settings, the indexer's
  (``graphrag_assets.defs``) with the evaluation's; ``definitions``: the ``defs`` that
  workspace.yaml and ``dg dev`` load.
- ``cli``: ``graphrag-index``, the indexer's command running these definitions
  (``code_location``: imported only when there are runs to launch).

The indexer does not import the query side; this package imports both.
"""
