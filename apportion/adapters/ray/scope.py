"""Which part of a Ray cluster the adapter manages: one named queue, and (optionally) some
nodes.

- queue: the adapter schedules the jobs of this queue of its queue file, and touches only
  the placement groups it named for them (`apportion-<queue>-<job>.<start>`); every other
  group, actor or task on the cluster is someone else's: not touched, its GPUs not there for
  the rounds;
- nodes: the adapter hands out the GPUs of these nodes (their `apportion_node_<name>`
  resource); none given: every node that declares a name and a GPU type.

Adapters sharing a cluster must have different queues and disjoint nodes: each would
otherwise plan on GPUs the other hands out.
"""

from __future__ import annotations

from dataclasses import dataclass

from apportion.adapters.ray.raycluster import RayNode


@dataclass(frozen=True)
class Scope:
    """The part of the cluster one adapter manages."""

    queue: str = "default"
    nodes: frozenset[str] = frozenset()

    def schedules(self, node: RayNode) -> bool:
        """The round may hand out this node's GPUs."""
        usable = node.alive and node.problem is None and node.gpus > 0
        typed = node.name is not None and node.gpu_type is not None
        return usable and typed and (not self.nodes or node.name in self.nodes)

    def owns(self, name: str) -> str | None:
        """The job id whose placement group is named `name`, None when it is not ours."""
        prefix = f"apportion-{self.queue}-"
        if not name.startswith(prefix):
            return None
        job, _, start = name[len(prefix) :].partition(".")
        return job if job.isdigit() and start.isdigit() else None

    def describe(self) -> str:
        nodes = f"; nodes {','.join(sorted(self.nodes))}" if self.nodes else ""
        return f"queue {self.queue}{nodes}"
