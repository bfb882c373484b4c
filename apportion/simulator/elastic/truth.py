"""The simulated ("true") step time of a job, as Sia's simulator computes it from the measured
profiles (`refdata.sia`): what the job experiences, whatever the scheduler believes.

A placement is the GPUs on each node it uses, e.g. (4, 4). When the profile measured that exact
placement (up to rotation), step and sync time are interpolated linearly in the micro-batch
between its measured sizes; otherwise linearly (barycentric, over a Delaunay triangulation) in
(nodes capped at 16, replicas, micro-batch) over the scalability rows and the placement rows
averaged per (nodes, replicas, micro-batch). Outside the measured range the configuration
cannot run (None).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy.interpolate import LinearNDInterpolator

from apportion.refdata.sia import Profile, profile
from apportion.solver.arraytypes import FloatArray

#: Sia interpolates over at most this many nodes (its profiles measured up to 16).
NODE_CAP = 16

Placement = tuple[int, ...]


def canonical(placement: Placement) -> str:
    """The lexicographically smallest rotation of the non-empty nodes, as profile digits."""
    nodes = tuple(g for g in placement if g > 0)
    if not nodes:
        return ""
    best = min(nodes[i:] + nodes[:i] for i in range(len(nodes)))
    return "".join(map(str, best))


class Truth:
    """Step and sync time of one model on one GPU type."""

    def __init__(self, data: Profile) -> None:
        self.data = data
        self._by_placement: dict[str, tuple[FloatArray, FloatArray, FloatArray]] = {}
        for key in set(data.placement):
            rows = np.array([p == key for p in data.placement])
            order = np.argsort(data.local_batch[rows], kind="stable")
            self._by_placement[key] = (
                data.local_batch[rows][order],
                data.step_time[rows][order],
                data.sync_time[rows][order],
            )
        self._anywhere: LinearNDInterpolator | None = None
        # a job asks the same few (placement, micro-batch) pairs every epoch of every round
        self._known: dict[tuple[str, float], tuple[float, float] | None] = {}

    def step_time(self, placement: Placement, local_batch: float) -> tuple[float, float] | None:
        """(step, sync) seconds of one micro-batch step, None where nothing was measured."""
        key = canonical(placement)
        asked = (key, float(local_batch))
        if asked not in self._known:
            self._known[asked] = self._step_time(key, local_batch)
        return self._known[asked]

    def _step_time(self, key: str, local_batch: float) -> tuple[float, float] | None:
        if not key:
            return None
        exact = self._by_placement.get(key)
        if exact is not None:
            batch, step, sync = exact
            if not batch[0] <= local_batch <= batch[-1]:
                return None
            return float(np.interp(local_batch, batch, step)), float(
                np.interp(local_batch, batch, sync)
            )
        nodes = min(len(key), NODE_CAP)
        got = self._interpolator()([[nodes, sum(map(int, key)), local_batch]])[0]
        if not np.all(np.isfinite(got)):
            return None
        return float(got[0]), float(got[1])

    def max_local_batch(self, placement: Placement) -> int:
        """The largest micro-batch measured for the placement (or, when it was not measured,
        among scalability rows with at least its nodes and replicas)."""
        key = canonical(placement)
        if key in self._by_placement:
            return int(self._by_placement[key][0][-1])
        d = self.data
        nodes, replicas = len(key), sum(map(int, key))
        wide = (d.scale_nodes >= nodes) & (d.scale_replicas >= replicas)
        return int(d.scale_local_batch[wide].max()) if wide.any() else d.max_local_batch

    def max_local_for_replicas(self, replicas: int) -> int | None:
        """The largest micro-batch measured for any placement of `replicas` GPUs."""
        rows = self.data.replicas == replicas
        return int(self.data.local_batch[rows].max()) if rows.any() else None

    def _interpolator(self) -> LinearNDInterpolator:
        if self._anywhere is None:
            d = self.data
            keys = np.column_stack([d.nodes, d.replicas, d.local_batch]).astype(float)
            values = np.column_stack([d.step_time, d.sync_time])
            unique, inverse = np.unique(keys, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            counts = np.bincount(inverse)
            mean = np.column_stack(
                [np.bincount(inverse, weights=values[:, i]) / counts for i in range(2)]
            )
            points = np.vstack(
                [unique, np.column_stack([d.scale_nodes, d.scale_replicas, d.scale_local_batch])]
            )
            both = np.vstack([mean, np.column_stack([d.scale_step_time, d.scale_sync_time])])
            self._anywhere = LinearNDInterpolator(points, both)
        return self._anywhere


@cache
def truth(model: str, gpu: str) -> Truth:
    return Truth(profile(model, gpu))
