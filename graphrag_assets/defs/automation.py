"""When automation builds a corpus's graph: when its sources are newer than the graph.

Dagster's ``eager`` decides from evaluation intervals: "a dependency updated since the
previous evaluation", reset by "this asset was requested or updated since then". Both
happen in one interval in two common cases, and ``eager`` gets each wrong:
- a file read while the graph was building (it waited for the pool's slot and was read
  right after the build had read the others): the graph's update resets the change, which
  then reaches the graph only with the next file;
- a graph build that automation did not launch (``build_graph`` from the UI, the sensor's
  build after a deletion): its own upstream steps count as a dependency update, and the
  graph is built a second time for nothing (``executed_with_root_target`` tells these apart
  only for runs launched with an asset selection).
Comparing the event log's storage ids answers both: a partition is out of date when one of
its dependencies' partitions holds a materialization after its own latest one.

A corpus depends on all source partitions (``partitions.ALL_SOURCES``: Dagster has no
key-prefix mapping, and a custom mapping does not reach the daemon's asset graph), so the
condition counts only the sources of the corpus itself (keys ``<corpus>/...``): a file
dropped into one corpus rebuilds that corpus alone.
"""

from __future__ import annotations

from dagster import AssetKey, AutomationCondition, AutomationContext, AutomationResult, DagsterEventType

from ..core.inputs import corpus_of_partition
from .partitions import corpus_partitions, source_partitions


class DepsNewerThanSelf(AutomationCondition):
    """True for the partitions with a dependency materialized after their own latest
    materialization (or never materialized while a dependency was)."""

    @property
    def name(self) -> str:
        return "deps_newer_than_self"

    def evaluate(self, context: AutomationContext) -> AutomationResult:
        view, instance = context.asset_graph_view, context.asset_graph_view.instance
        latest: dict[AssetKey, dict[str, int]] = {}

        def latest_of(key: AssetKey) -> dict[str, int]:
            # One query per asset for all its partitions (a corpus has one source partition
            # per file).
            if key not in latest:
                latest[key] = instance.get_latest_storage_id_by_partition(key, DagsterEventType.ASSET_MATERIALIZATION)
            return latest[key]

        graph = context.asset_graph
        parents = sorted(k for k in graph.get(context.key).parent_keys if graph.has(k))
        own = latest_of(context.key)
        # Parents partitioned by source, read per corpus: only the corpus's own keys count.
        by_source = (
            {parent for parent in parents if _partitions_name(graph, parent) == source_partitions.name}
            if _partitions_name(graph, context.key) == corpus_partitions.name
            else set()
        )
        outdated = set()
        for partition in context.candidate_subset.expensively_compute_asset_partitions():
            single = view.get_asset_subset_from_asset_partitions(context.key, {partition})
            newest_dep = max(
                (
                    latest_of(parent).get(key, 0)
                    for parent in parents
                    for key in single.compute_mapped_subset(parent, direction="up").expensively_compute_partition_keys()
                    if parent not in by_source or corpus_of_partition(key) == partition.partition_key
                ),
                default=0,
            )
            if newest_dep > own.get(partition.partition_key, 0):
                outdated.add(partition)
        return AutomationResult(context, view.get_asset_subset_from_asset_partitions(context.key, outdated))


def _partitions_name(graph, key: AssetKey) -> str | None:
    return getattr(graph.get(key).partitions_def, "name", None)


# Graph assets follow their sources automatically (the `graph_automation` sensor, on by
# default). A source partition that is missing (its file was never read, or could not be)
# does not block the graph of the others: the graph is built from the sources that are
# there, and the unreadable source's check says what is missing. Steps downstream of a step
# automation requests go in the same run. A partition whose last run failed is not asked for
# again until a dependency changes once more (the run's steps already retried; the hourly
# consistency sensor repairs what is still missing).
FOLLOW_SOURCES = (
    AutomationCondition.in_latest_time_window()
    & (DepsNewerThanSelf() | AutomationCondition.any_deps_match(AutomationCondition.will_be_requested()))
    & (
        ~AutomationCondition.execution_failed()
        | AutomationCondition.any_deps_match(AutomationCondition.newly_updated())
    )
    & ~AutomationCondition.any_deps_in_progress()
    & ~AutomationCondition.in_progress()
).with_label("follow_sources")
