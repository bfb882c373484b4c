"""The rules every Tiresias schedule keeps, read off the answer alone: each job either runs,
its whole gang on real nodes within their GPUs (a running job where it was, a consolidated one
on the fewest nodes that hold it), or waits with a reason."""

from __future__ import annotations

from typing import Any


def fewest_nodes(sizes: list[int], gang: int) -> int:
    """The fewest of these nodes whose GPUs add up to `gang` (0: they cannot)."""
    total = 0
    for count, size in enumerate(sorted(sizes, reverse=True), start=1):
        total += size
        if total >= gang:
            return count
    return 0


def consolidated(job: dict[str, Any], pack_limit: float = 0.5) -> bool:
    """Whether the job must sit on its fewest nodes: a gang asking for it or a skewed model."""
    tensors = job.get("tensor_sizes") or []
    skewed = bool(tensors) and max(tensors) / sum(tensors) > pack_limit
    return job["scale_factor"] >= 2 and (bool(job.get("consolidate")) or skewed)


def check_schedule(
    snapshot: dict[str, Any], result: Any, consolidate: bool = True, pack_limit: float = 0.5
) -> list[bool]:
    """Assert the rules; the run indicator of each job, in snapshot order."""
    sizes = {n["id"]: n["gpus"] for n in snapshot["nodes"]}
    used = dict.fromkeys(sizes, 0)
    assert [j.id for j in result.jobs] == [j["id"] for j in snapshot["jobs"]]
    runs = []
    for job, got in zip(snapshot["jobs"], result.jobs, strict=True):
        placed = got.placement
        runs.append(placed is not None)
        if placed is None:
            assert got.reason, f"{job['id']} waits without a reason"
            continue
        assert set(placed) <= set(sizes), f"{job['id']} placed on unknown nodes"
        assert all(g > 0 for g in placed.values())
        assert sum(placed.values()) == job["scale_factor"], f"{job['id']}: a broken gang"
        if "placement" in job:
            assert placed == job["placement"], f"{job['id']}: a running job was moved"
        elif consolidate and consolidated(job, pack_limit):
            most = fewest_nodes(list(sizes.values()), job["scale_factor"])
            assert len(placed) <= most, f"{job['id']}: not consolidated"
        for node, gpus in placed.items():
            used[node] += gpus
    assert all(used[n] <= sizes[n] for n in sizes), "a node holds more GPUs than it has"
    return runs
