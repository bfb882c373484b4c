"""Documents recorded from the live test cluster (`squeue --json`, `sinfo --json` of Slurm
22.05.8) and the throughput table the unit tests read them with.

The recorded cluster: n1, n2 with 8 V100 each, n3, n4 with 8 K80 each. Its jobs:

| id | name | request | state |
|---|---|---|---|
| 1 | a | `--gres=gpu:2 -C v100 --comment=model=resnet50` | running on n1 (2 V100) |
| 2 | b | `--gres=gpu:k80:4 --comment=model=lm,weight=2` | running on n3 (4 K80), requeued once |
| 3 | transformer | `--gpus=12 -C v100` | running on n1 + n2 (6 + 6 V100) |
| 4 | e | `--gres=gpu:1 --comment=model=resnet50 --hold` | pending, held |
| 5 | f | `--gres=gpu:k80:8 --comment=model=resnet50 --hold` | pending, held |
| 6 | unknown-model | `--gres=gpu:2 --hold` | pending, held |
| 7 | cpu-only | no GPU | running on n1 |
| 8 | i | `--gres=gpu:4 -C 'v100&k80' --comment=model=lm --hold` | pending, held |
| 9 | two-nodes | `--gres=gpu:2 -N 2 --comment=model=lm --hold` | pending, held |

It was read at `RECORDED_AT` (seconds since the epoch, the controller's clock).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
RECORDED_AT = 1795425590.0
TABLE = {
    "resnet50": {"v100": 400.0, "k80": 100.0},
    "lm": {"v100": 30.0, "k80": 12.0},
    "transformer": {"v100": 50.0, "k80": 10.0},
}


def squeue() -> dict[str, Any]:
    return json.loads((DATA / "squeue.json").read_text())


def sinfo() -> dict[str, Any]:
    return json.loads((DATA / "sinfo.json").read_text())
