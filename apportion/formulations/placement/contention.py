"""Contention-sensitivity lookups with explicit fallbacks.

CS(target | co-runner) for two configurations (class, total GPUs, nodes spanned), in this order:

1. `exact` — the table has the pair;
2. `nearest` — the closest measured pair of the same two classes, distance
   Σ |log2 a − log2 b| over the four numbers (GPUs and nodes of both jobs); ties take the larger
   CS, erring on the side of caution;
3. `class_default` — the table's default for the class pair;
4. `default` — 1.0 (no contention known).

A table's `max_cs` then caps the value (DeepShare's simulator: CS ≤ 1/0.35), keeping its source.

Under DeepShare's model (`scope="multi_node"`) a job on a single node keeps its traffic inside the
node: it neither suffers nor causes network contention (`single_node`, CS = 1).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

import numpy as np

from apportion.solver.snapshot.contention import ContentionTable

Config = tuple[str | None, int, int]  # (workload class or None, total GPUs, nodes spanned)


class Source(StrEnum):
    """Where a contention sensitivity came from."""

    EXACT = "exact"
    NEAREST = "nearest"
    CLASS_DEFAULT = "class_default"
    DEFAULT = "default"
    SINGLE_NODE = "single_node"


@dataclass(frozen=True)
class Lookup:
    """A CS value and how it was found (`entry` names the measured pair used, if any)."""

    cs: float
    source: Source
    entry: str | None = None
    capped: bool = False  # the table's `max_cs` lowered the value found


class ContentionLookup:
    """Answers CS(target | co-runner) from a table, falling back as the module says.

    `ContentionLookup.of` keeps the lookups of the last few tables it was given: a caller that
    sends the same table object at every call (the simulator) indexes it once."""

    _recent: ClassVar[dict[tuple[int, str], tuple[ContentionTable | None, ContentionLookup]]] = {}

    @classmethod
    def of(cls, table: ContentionTable | None, scope: str = "multi_node") -> ContentionLookup:
        key = (id(table), scope)
        known = cls._recent.get(key)
        if known is not None and known[0] is table:
            return known[1]
        lookup = cls(table, scope)
        if len(cls._recent) >= 4:
            cls._recent.pop(next(iter(cls._recent)))
        cls._recent[key] = (table, lookup)
        return lookup

    def __init__(self, table: ContentionTable | None, scope: str = "multi_node") -> None:
        self.scope = scope
        self.cap = table.max_cs if table is not None else None
        self._exact: dict[tuple[Config, Config], float] = {}
        pairs: dict[tuple[str, str], list[tuple[int, int, int, int, float]]] = defaultdict(list)
        self._class: dict[tuple[str, str], float] = {}
        if table is not None:
            for e in table.entries:
                t, c = e.target, e.co_runner
                self._exact[(t.key, c.key)] = e.cs
                pairs[(t.workload_class, c.workload_class)].append(
                    (t.gpus, t.nodes, c.gpus, c.nodes, e.cs)
                )
            self._class = {(d.target_class, d.co_runner_class): d.cs for d in table.class_defaults}
        self._pairs = {k: np.log2(np.array(v, dtype=float)[:, :4]) for k, v in pairs.items()}
        self._values = {k: np.array([row[4] for row in v]) for k, v in pairs.items()}
        self._raw = dict(pairs)

    def largest(self) -> float:
        """The largest CS any lookup can answer (every answer is a table value, capped, or 1)."""
        values = [*self._exact.values(), *self._class.values(), 1.0]
        return min(max(values), self.cap) if self.cap is not None else max(values)

    def __call__(self, target: Config, co_runner: Config) -> Lookup:
        found = self._find(target, co_runner)
        if self.cap is not None and found.cs > self.cap:
            return Lookup(self.cap, found.source, found.entry, capped=True)
        return found

    def _find(self, target: Config, co_runner: Config) -> Lookup:
        if self.scope == "multi_node" and (target[2] <= 1 or co_runner[2] <= 1):
            return Lookup(1.0, Source.SINGLE_NODE)
        if target[0] is None or co_runner[0] is None:
            return Lookup(1.0, Source.DEFAULT)
        exact = self._exact.get((target, co_runner))
        if exact is not None:
            return Lookup(exact, Source.EXACT, _pair_name(target, co_runner))
        classes = (target[0], co_runner[0])
        if classes in self._pairs:
            return self._nearest(classes, target, co_runner)
        if classes in self._class:
            return Lookup(self._class[classes], Source.CLASS_DEFAULT)
        return Lookup(1.0, Source.DEFAULT)

    def _nearest(self, classes: tuple[str, str], target: Config, co_runner: Config) -> Lookup:
        logs = self._pairs[classes]
        wanted = np.log2([target[1], target[2], co_runner[1], co_runner[2]])
        distance = np.abs(logs - wanted).sum(axis=1)
        values = self._values[classes]
        # Closest first, then the larger CS among equally close pairs.
        best = int(np.lexsort((-values, np.round(distance, 9)))[0])
        g1, n1, g2, n2, cs = self._raw[classes][best]
        return Lookup(
            float(cs),
            Source.NEAREST,
            _pair_name((classes[0], int(g1), int(n1)), (classes[1], int(g2), int(n2))),
        )


def _pair_name(target: Config, co_runner: Config) -> str:
    return f"{target[0]},{target[1]},{target[2]} | {co_runner[0]},{co_runner[1]},{co_runner[2]}"
