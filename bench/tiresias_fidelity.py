"""Fidelity to Tiresias's own simulator: YARN-CS, 2D-LAS and 2D-Gittins on the same traces.

python -m bench.tiresias_fidelity                      # the recorded reference figures
python -m bench.tiresias_fidelity --reference DIR      # run the reference simulator too

The traces: the Philly sample (all 1,258 jobs) at 1×, 1.5× and 2× Philly's arrival density,
exported to Tiresias's CSV (`export`: times in whole seconds, which the sample's are, model
names as Tiresias's `models.py` spells them). Both simulators read that file, on `n32g4` (32
nodes × 4 GPUs). The reference: `run_sim.py` of SymbioticLab/Tiresias's `simulator/` (Python
2.7) with `--schedule fifo --scheme yarn` (YARN-CS), `dlas-gpu --scheme count` (2D-LAS on
GPU-seconds) and `dlas-gpu-gittins --scheme count` (2D-Gittins, from its `yarn-gput1000.csv`
samples); its queues are split at 3,250 and 7,200 GPU-seconds and no starvation promotion.
Ours, in the same world: schedule enactment, Tiresias's greedy admission, the same queues, the
2D-Gittins index from the same 1,000 samples, no consolidation (`pack_limit` 1: its `count`
placement only counts free GPUs), no preemption cost and no spread slowdown (it models
neither). The table shows the average JCT of each and the ratio ours/theirs; preemptions count
a running job stopped (ours: its restarts).

`DIR` is the reference's `simulator/` folder (e.g. a `git archive` of the repository); it is
run with `python2` from a scratch copy, beside empty stand-ins for numpy and cplex, which it
imports but these schedules never call. Without it, the reference's figures are those recorded
on the date and commit below.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from apportion.refdata import SOURCE
from apportion.refdata.tiresias import ALIASES, yarn_distribution
from apportion.simulator import SimConfig, TraceSpec, simulate
from apportion.simulator.config import Mode
from apportion.simulator.trace import Trace

LOADS = (1.0, 1.5, 2.0)
#: Ours → the reference's schedule and placement scheme.
POLICIES = {
    "YARN-CS": ("fifo", "yarn"),
    "2D-LAS": ("dlas-gpu", "count"),
    "2D-Gittins": ("dlas-gpu-gittins", "count"),
}
THRESHOLDS = [3250.0, 7200.0]
SAMPLES = SOURCE / "tiresias_yarn_gput1000.csv"
CLUSTER = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n1,32,4,40,256\n"
COLUMNS = ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration", "interval")

REFERENCE_COMMIT = "959f9b08f44fa1b4f2b3aed79b01e4d439264a94"
RECORDED_ON = "2026-11-28"
#: (policy, load) → (average JCT in hours, preemptions), Tiresias's simulator at the commit.
RECORDED = {
    ("YARN-CS", 1.0): (7.8264, 0),
    ("YARN-CS", 1.5): (13.9688, 0),
    ("YARN-CS", 2.0): (19.9890, 0),
    ("2D-LAS", 1.0): (3.5614, 470),
    ("2D-LAS", 1.5): (3.7218, 824),
    ("2D-LAS", 2.0): (3.8735, 928),
    ("2D-Gittins", 1.0): (3.4319, 181),
    ("2D-Gittins", 1.5): (3.5759, 911),
    ("2D-Gittins", 2.0): (3.7789, 2500),
}


@dataclass(frozen=True)
class Figure:
    jct_hours: float
    preemptions: int


def export(trace: Trace, path: Path) -> None:
    """The trace as Tiresias's job CSV; raises ValueError for a time that is not whole seconds
    (the reference reads integers) or a job on more than one GPU type."""
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(COLUMNS)
        for i, job in enumerate(sorted(trace.jobs, key=lambda j: j.arrival)):
            (speed,) = job.throughput.values()
            seconds = job.total_steps / speed
            if seconds != round(seconds) or job.arrival != round(job.arrival):
                raise ValueError(f"job {job.id}: times must be whole seconds for Tiresias's CSV")
            model = job.workload_class or ""
            model = ALIASES.get(model, model)
            arrival, duration = int(job.arrival), int(seconds)
            out.writerow([i, job.scale_factor, arrival, duration, model, duration, 0])


def ours(path: Path, policy: str) -> Figure:
    spec = TraceSpec("tiresias", source=str(path), cluster={"gpu": 128}, gpus_per_node=4)
    options = {"thresholds": THRESHOLDS, "admission": "greedy", "pack_limit": 1.0}
    if policy == "YARN-CS":
        config = SimConfig(policy="yarn_cs", mode=Mode.SCHEDULE)
    elif policy == "2D-LAS":
        config = SimConfig(policy="tiresias_las", mode=Mode.SCHEDULE, options=options)
    else:
        fields = {"service_distribution": yarn_distribution(SAMPLES)}
        config = SimConfig(
            policy="tiresias_gittins", mode=Mode.SCHEDULE, options=options, snapshot_fields=fields
        )
    result = simulate(spec.load_trace(), config)
    return Figure(result.summary["jct_mean"] / 3600, int(result.records["moves"].sum()))


def theirs(
    simulator: Path, trace_csv: Path, policy: str, scratch: Path, python2: str = "python2"
) -> Figure:
    """Run the reference's `run_sim.py` on the CSV; its `job.csv` log gives JCT and preempts."""
    work = scratch / "simulator"
    if not work.exists():
        shutil.copytree(simulator, work)
        (work / "bench_n32g4.csv").write_text(CLUSTER)
        stand_ins = scratch / "stand_ins"
        (stand_ins / "cplex" / "six" / "moves").mkdir(parents=True)
        (stand_ins / "numpy.py").write_text("")
        (stand_ins / "cplex" / "__init__.py").write_text("")
        (stand_ins / "cplex" / "exceptions.py").write_text(
            "class CplexError(Exception):\n    pass\n"
        )
        (stand_ins / "cplex" / "six" / "__init__.py").write_text("")
        (stand_ins / "cplex" / "six" / "moves" / "__init__.py").write_text("range = range\n")
    schedule, scheme = POLICIES[policy]
    logs = scratch / f"log-{trace_csv.stem}-{schedule}"
    shutil.copy(trace_csv, work / trace_csv.name)
    command = [python2, "run_sim.py", "--cluster_spec=bench_n32g4.csv", f"--scheme={scheme}"]
    command += [f"--trace_file={trace_csv.name}", f"--schedule={schedule}", f"--log_path={logs}"]
    env = {**os.environ, "PYTHONPATH": str(scratch / "stand_ins")}
    subprocess.run(command, cwd=work, env=env, check=True, capture_output=True)
    with (logs / "job.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    jct = sum(float(r["JCT"]) for r in rows) / len(rows) / 3600
    return Figure(jct, sum(int(r["preempt"]) for r in rows))


def table(
    reference: Path | None, loads: tuple[float, ...] = LOADS, python2: str = "python2"
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for load in loads:
            trace_csv = scratch / f"philly_{load:g}.csv"
            export(TraceSpec("philly", load=load).load_trace(), trace_csv)
            for policy in POLICIES:
                mine = ours(trace_csv, policy)
                if reference is not None:
                    ref = theirs(reference, trace_csv, policy, scratch, python2)
                    source = "ran now"
                else:
                    ref = Figure(*RECORDED[(policy, load)])
                    source = f"recorded {RECORDED_ON}"
                rows.append(_row(policy, load, mine, ref, source))
    return rows


def _row(policy: str, load: float, mine: Figure, ref: Figure, source: str) -> dict[str, object]:
    return {
        "policy": policy,
        "load": load,
        "ours_h": mine.jct_hours,
        "theirs_h": ref.jct_hours,
        "ours/theirs": mine.jct_hours / ref.jct_hours,
        "ours_preempt": mine.preemptions,
        "theirs_preempt": ref.preemptions,
        "reference": source,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, help="Tiresias's simulator/ folder")
    parser.add_argument("--python2", default="python2", help="a Python 2.7 interpreter")
    parser.add_argument("--loads", type=float, nargs="+", default=list(LOADS))
    args = parser.parse_args()
    if args.reference is not None and shutil.which(args.python2) is None:
        parser.error(f"--reference needs a Python 2.7 interpreter: {args.python2} not found")
    rows = table(args.reference, tuple(args.loads), args.python2)
    print(f"reference: SymbioticLab/Tiresias simulator/ at {REFERENCE_COMMIT[:12]}")
    head = f"{'policy':<11}{'load':>5}{'ours h':>9}{'theirs h':>10}{'ratio':>8}"
    print(head + f"{'ours pre':>10}{'theirs pre':>12}  reference")
    for r in rows:
        print(
            f"{r['policy']:<11}{r['load']:>5g}{r['ours_h']:>9.3f}{r['theirs_h']:>10.3f}"
            f"{r['ours/theirs']:>8.4f}{r['ours_preempt']:>10}{r['theirs_preempt']:>12}"
            f"  {r['reference']}"
        )


if __name__ == "__main__":
    main()
