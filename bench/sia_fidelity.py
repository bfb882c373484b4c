"""Fidelity to Sia's own simulator: average JCT of apportion's elastic simulation under the `sia`
policy against Sia's simulator (siasosp23/artifacts, `sia-simulator/multi_simulator.py`) under
Sia's policy, on the first jobs of Saturn workloads, Sia's default cluster (6 × 4 T4,
2 × 8 A100, 3 × 8 RTX 2080Ti), 60-s rounds, p = −0.5, λ_n = 1.1, throughputs projected across
types and replica limits shared (its `run_experiment.sh`).

    python -m bench.sia_fidelity                      # ours, against the recorded figures
    python -m bench.sia_fidelity --reference DIR      # also run Sia's simulator in DIR

`DIR` is a copy of the artifacts' `sia-simulator` folder, run with `--python` (its README: numpy,
pandas, scipy, autograd and cvxpy with a MIP solver). The recorded figures were run at
`REFERENCE_COMMIT` with two changes that keep its logic: the MIP solved by HiGHS at its own
1e-4 relative gap (CBC not installed) and `DataFrame.append` written as `pandas.concat`
(pandas 2).

Single jobs swing both ways: a tie sends a job to another GPU type (a new job, without a model,
is worth 1 on one GPU of every type; Sia also rounds A = Ĝ^p to two decimals, ours does not),
and the model it then learns there keeps it on its own path (a YOLOv3 job started on a T4 stays
on T4s where Sia's run started it on an A100); the table is of the averages.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REFERENCE_COMMIT = "aaf7a0de7b6cb5eab06ea020467ede5d2fd18e70"
TARGET = 0.05
SIA_FLAGS = (
    "--policy=sia",
    "--policy_p_val=-0.5",
    "--mip_lambda_a=0.01",
    "--mip_lambda_n=1.1",
    "--interval=60",
    "--project_throughputs",
    "--share_max_replicas",
)


@dataclass(frozen=True)
class Workload:
    family: str
    number: int
    jobs: int

    @property
    def label(self) -> str:
        return f"{self.family} {self.number}, first {self.jobs}"


#: Sia's simulator under Sia's policy at `REFERENCE_COMMIT`: mean JCT in seconds.
RECORDED: dict[Workload, float] = {
    Workload("saturn", 1, 15): 1560.4,
    Workload("saturn", 1, 20): 1385.45,
    Workload("saturn", 1, 25): 2539.88,
    Workload("saturn", 2, 15): 1291.4,
    Workload("saturn", 2, 20): 1268.9,
    Workload("saturn", 3, 20): 1561.6,
}


def ours(workload: Workload) -> float:
    """Mean JCT (s) of the elastic simulation under `sia`."""
    from apportion.refdata import sia
    from apportion.simulator.elastic.engine import simulate_elastic
    from apportion.simulator.elastic.policies import ApportionElastic

    jobs = sia.workload(workload.family, workload.number)[: workload.jobs]
    result = simulate_elastic(jobs, sia.SIA_CLUSTER, ApportionElastic("sia", sia.SIA_CLUSTER))
    return float(result.records["jct"].mean())


def reference(workload: Workload, where: Path, python: str) -> float:
    """Mean JCT (s) of Sia's simulator in `where` on the same jobs."""
    from apportion.refdata.sia import workload_path

    rows = workload_path(workload.family, workload.number).read_text().splitlines()
    with tempfile.TemporaryDirectory() as scratch:
        csv = Path(scratch) / "workload.csv"
        csv.write_text("\n".join(rows[: workload.jobs + 1]) + "\n")
        ran = subprocess.run(
            [python, "multi_simulator.py", str(csv), *SIA_FLAGS],
            cwd=where,
            capture_output=True,
            text=True,
            check=True,
        )
    return mean_jct(ran.stdout)


def mean_jct(stdout: str) -> float:
    """The mean of the last completed-jobs dictionary Sia's simulator prints."""
    last = [line for line in stdout.splitlines() if line.startswith("{")][-1]
    jcts: dict[str, float] = ast.literal_eval(last)
    return sum(jcts.values()) / len(jcts)


def table(rows: list[tuple[Workload, float, float]], source: str) -> str:
    lines = [
        f"{'workload':<24} {'Sia (h)':>8} {'ours (h)':>9} {'ours/Sia':>9}   reference: {source}"
    ]
    for workload, theirs, mine in rows:
        lines.append(
            f"{workload.label:<24} {theirs / 3600:>8.3f} {mine / 3600:>9.3f} "
            f"{mine / theirs - 1:>+9.1%}"
        )
    within = sum(abs(m / t - 1) <= TARGET for _, t, m in rows)
    overall = sum(m for _, _, m in rows) / sum(t for _, t, _ in rows) - 1
    lines.append(f"within ±{TARGET:.0%}: {within} of {len(rows)}; summed means: {overall:+.1%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, help="Sia's sia-simulator folder to run.")
    parser.add_argument("--python", default=sys.executable, help="Python for the reference.")
    args = parser.parse_args(argv)
    rows = []
    for workload, recorded in RECORDED.items():
        theirs = recorded
        if args.reference is not None:
            theirs = reference(workload, args.reference, args.python)
        rows.append((workload, theirs, ours(workload)))
    source = "run now" if args.reference else f"recorded at {REFERENCE_COMMIT[:12]}"
    print(table(rows, source))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
