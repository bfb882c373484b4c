"""What `solve simulate` tells the user beside the summary when a run's figures mislead."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apportion.simulator.sweep import RunSpec

#: Below this average utilization in every run, the summary says the cluster dwarfs the trace.
IDLE_UTILIZATION = 0.05
#: The utilization the suggested smaller cluster would have.
SUGGESTED_UTILIZATION = 0.5


def idle_note(rows: list[dict[str, Any]], run: RunSpec) -> str:
    """A note when every run left the cluster nearly idle (the trace's jobs ask for a sliver
    of its GPUs, so the policies have little to decide), with a cluster about half as busy."""
    used = [row.get("utilization") for row in rows]
    if not all(isinstance(u, float) and 0 < u < IDLE_UTILIZATION for u in used):
        return ""
    trace = run.trace.load_trace()
    busiest = max(u for u in used if isinstance(u, float))
    counts = trace.cluster.gpu_counts
    node = max(n.gpus for n in trace.cluster.nodes)
    gang = max(job.scale_factor for job in trace.jobs)
    smaller = {
        name: max(math.ceil(count * busiest / SUGGESTED_UTILIZATION / node), 1, -(-gang // node))
        * node
        for name, count in counts.items()
    }
    cluster = ",".join(f"{name}={gpus}" for name, gpus in smaller.items())
    return (
        f"note: the cluster was {100 * busiest:.1f} % used: its {sum(counts.values())} GPUs are "
        f"far more than the trace's {len(trace.jobs)} jobs ask for, so every policy runs nearly "
        f"every job at once and they differ little; a smaller cluster, e.g. --cluster {cluster} "
        "(about half used), or a denser trace (--load, --jobs) sets them apart"
    )
