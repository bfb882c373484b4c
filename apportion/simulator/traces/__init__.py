"""Trace readers: the reference systems' job traces (and Gavel's generator) as `Trace`s.

| reader | input | cluster by default |
|---|---|---|
| `read_gavel_trace` | Gavel `.trace` + its throughput table | 8 V100, 16 P100, 24 K80; 4 a node |
| `poisson_trace` | Gavel's job types, Poisson arrivals, a seed | 36 of each; 4 a node |
| `read_chronus` (`_csv`, `_json`) | Chronus CSV, `.csv.gz`, bundled JSON | 120 nodes × 8 |
| `read_deepshare_trace` | DeepShare trace + its profile and CS table | 4 nodes × 8 |
| `read_tiresias_csv` | Tiresias `60_job.csv` | 16 nodes × 4 |

Every reader raises a `TraceError` (an `InputError`) naming the file and line (or job key) of
the first row no job can be made of; rows left out by a rule of the reference system (Chronus's
num_gpu 0) are counted in `Trace.dropped`. Each module's docstring states its unit conventions.
"""

from __future__ import annotations

from apportion.simulator.traces.chronus import read_chronus, read_chronus_csv, read_chronus_json
from apportion.simulator.traces.deepshare import read_deepshare_trace
from apportion.simulator.traces.errors import TraceError
from apportion.simulator.traces.gavel import GAVEL_PHYSICAL_CLUSTER, read_gavel_trace
from apportion.simulator.traces.poisson import GAVEL_SIMULATED_CLUSTER, poisson_trace
from apportion.simulator.traces.tiresias import read_tiresias_csv

__all__ = [
    "GAVEL_PHYSICAL_CLUSTER",
    "GAVEL_SIMULATED_CLUSTER",
    "TraceError",
    "poisson_trace",
    "read_chronus",
    "read_chronus_csv",
    "read_chronus_json",
    "read_deepshare_trace",
    "read_gavel_trace",
    "read_tiresias_csv",
]
