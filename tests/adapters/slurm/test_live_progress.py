"""Progress a job reports on the live cluster (`steps=N` in its comment, set by the job itself
with `scontrol update`) reaches the estimate the adapter keeps in its state file: the job does
1,000 steps/s wherever it runs, its table row says 1,500 on V100, and a few rounds later the
state file holds an estimate near the truth, far tighter than the table's prior."""

from __future__ import annotations

import json
import time
from pathlib import Path

from apportion.adapters.framework import Controller, RoundPlanner, Settings
from apportion.adapters.slurm.integration import SlurmIntegration
from apportion.adapters.slurm.local.cluster import Cluster
from apportion.adapters.slurm.slurmcli import Slurm

TABLE = {"probe": {"v100": 1500.0, "k80": 1000.0}}
RATE = 1000  # steps/s the job really does
ROUND = 4.0
#: The job counts its steps from its own start (in milliseconds: 1,000 steps/s) and reports
#: them five times a second, as a training loop would.
SCRIPT = """#!/bin/sh
start=$(date +%s%3N)
while true; do
  now=$(date +%s%3N)
  scontrol update JobId=$SLURM_JOB_ID Comment="model=probe,steps=$((now - start))"
  sleep 0.2
done
"""


def test_a_job_reporting_its_steps_tightens_the_kept_estimate(
    cluster: Cluster, tmp_path: Path
) -> None:
    script = tmp_path / "train.sh"
    script.write_text(SCRIPT)
    submitted = cluster.run(
        "sbatch",
        "--parsable",
        "--output=/dev/null",
        "--hold",
        "--gres=gpu:1",
        "--comment=model=probe",
        str(script),
    )
    job = submitted.stdout.strip().split(";")[0]
    state = tmp_path / "state.json"
    settings = Settings(state, round_seconds=ROUND, allow_preemption=True, requeue_wait=2.0)
    integration = SlurmIntegration(Slurm(cluster.env), TABLE)
    ctl = Controller(integration, RoundPlanner(), settings)
    for _ in range(5):
        started = time.monotonic()
        outcome = ctl.step()
        assert outcome.error is None, outcome.error
        time.sleep(max(0.0, ROUND - (time.monotonic() - started)))
    ctl.close()
    saved = json.loads(state.read_text())
    assert job in saved["steps"]  # its baseline: what it reported at the last round
    assert list(saved["received"][job]) == ["v100"]  # the fastest type by its row
    gpu_type = "v100"
    cell = saved["estimate"]["jobs"][job]["throughput"][gpu_type]
    assert abs(cell["mean"] - RATE) < 0.2 * RATE  # the table said 1,500 on V100
    assert cell["sigma"] < 0.2  # the table's prior: 0.4
    assert saved["estimate"]["observed"], "no observation was sent"
