"""Contention placement as a scheduler on DeepShare's traces, in one world for every policy
(bench rows of `simulator`): the schedule objective at W1 = 0.4 with 2 priority levels (tuned on
the training episodes, `bench.windows.CONTENTION_W1`; DeepShare recommends W1 = 0.3) against
non-preemptive FIFO, SRTF and LAS placed as DeepShare's baselines are, on its `simulate` and
`real` trace0 (256 jobs, 4 × 8 GPUs, 300-s rounds) and its nine training episodes. Targets: a
whole `simulate` run within 30 s; average JCT ≤ 0.85 × and p99 JCT ≤ 0.8 × the best baseline's
(`ratio` is ours ÷ the best baseline's average JCT; the note has both ratios, utilization,
DeepShare's own JCT (run time) and the policy's calls, with those stopped at the per-call
limit)."""

from __future__ import annotations

from apportion.simulator.config import CALL_TIME_LIMIT, SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.result import SimulationResult
from apportion.simulator.sources import TraceSpec
from apportion.simulator.traces.deepshare import SIMULATE_TRACE0, TRACE0, TRAIN_EPISODES
from bench.harness import Case, Row
from bench.windows import CONTENTION_LEVELS, CONTENTION_W1

W1 = CONTENTION_W1
ROUND = 300.0
POLICY = SimConfig(
    policy="contention_placement",
    options={"w1": W1, "priority_levels": CONTENTION_LEVELS},
    round_seconds=ROUND,
)
BASELINES = {"FIFO": "fifo_baseline", "SRTF": "srtf", "LAS": "las"}  # label → policy


def _run(spec: TraceSpec, config: SimConfig) -> SimulationResult:
    return simulate(spec.load_trace(), config)


def compare(spec: TraceSpec) -> tuple[SimulationResult, dict[str, SimulationResult]]:
    """The policy and every baseline on one trace."""
    ours = _run(spec, POLICY)
    baselines = {
        label: _run(spec, SimConfig(policy=b, round_seconds=ROUND))
        for label, b in BASELINES.items()
    }
    return ours, baselines


def ratios(ours: SimulationResult, baselines: dict[str, SimulationResult]) -> tuple[float, float]:
    """Ours ÷ the best baseline, for average and p99 JCT."""
    mean = min(r.summary["jct_mean"] for r in baselines.values())
    p99 = min(r.summary["jct_p99"] for r in baselines.values())
    return ours.summary["jct_mean"] / mean, ours.summary["jct_p99"] / p99


def _note(ours: SimulationResult, baselines: dict[str, SimulationResult]) -> str:
    mean, p99 = ratios(ours, baselines)
    s = ours.summary
    others = ", ".join(
        f"{b} {r.summary['jct_mean'] / 3600:.1f}/{r.summary['jct_p99'] / 3600:.1f} h"
        for b, r in baselines.items()
    )
    verdict = "yes" if mean <= 0.85 and p99 <= 0.8 else "NO"
    return (
        f"JCT mean/p99 {s['jct_mean'] / 3600:.1f}/{s['jct_p99'] / 3600:.1f} h ({others}): "
        f"×{mean:.2f} mean, ×{p99:.2f} p99 of the best (≤ 0.85, ≤ 0.8: {verdict}); "
        f"utilization {s['utilization']:.0%}, run time {s['run_time_mean'] / 3600:.2f} h; "
        f"{s['policy_calls']} calls (median {1000 * ours.calls['seconds'].median():.0f} ms), "
        f"{s['calls_at_work_limit']} at the {CALL_TIME_LIMIT:g}-s work limit"
    )


def _row(case: Case, specs: list[TraceSpec]) -> Row:
    runs = [compare(spec) for spec in specs]
    wall = sum(ours.wall_seconds for ours, _ in runs)
    if len(runs) == 1:
        ours, baselines = runs[0]
        note = _note(ours, baselines)
        ratio = ratios(ours, baselines)[0]
        status = f"{ours.summary['finished']} done"
    else:
        pairs = [ratios(o, b) for o, b in runs]
        mean = sum(p[0] for p in pairs) / len(pairs)
        p99 = sum(p[1] for p in pairs) / len(pairs)
        walls = [o.wall_seconds for o, _ in runs]
        worst = (max(p[0] for p in pairs), max(p[1] for p in pairs))
        ratio = mean
        note = (
            f"{len(runs)} episodes: ×{mean:.2f} mean JCT on average (worst ×{worst[0]:.2f}), "
            f"×{p99:.2f} p99 (worst ×{worst[1]:.2f}) of the best baseline; each run "
            f"{min(walls):.1f}–{max(walls):.1f} s"
        )
        status = f"{sum(o.summary['finished'] for o, _ in runs)} done"
    return Row(
        case=case,
        jobs=sum(int(o.summary["jobs"]) for o, _ in runs),
        types=1,
        validate=0.0,
        build=0.0,
        solve=sum(float(o.summary["policy_seconds"]) for o, _ in runs),
        total=wall,
        objective=None,
        status=status,
        backend="simulator",
        ratio=ratio,
        note=note,
    )


def _train() -> list[TraceSpec]:
    return [TraceSpec("deepshare", str(path)) for path in TRAIN_EPISODES]


def cases() -> list[Case]:
    def case(name: str, specs: list[TraceSpec], target: float | None) -> Case:
        return Case(
            "simulator",
            f"DeepShare {name}, contention schedule W1={W1:g} vs FIFO, SRTF, LAS",
            dict,
            "contention_placement",
            target_seconds=target,
            runner=lambda c: _row(c, specs),
        )

    return [
        case("simulate trace0", [TraceSpec("deepshare", str(SIMULATE_TRACE0))], 30.0),
        case("real trace0", [TraceSpec("deepshare", str(TRACE0))], None),
        case("train jobsets 0–2 × episodes 0–2", _train(), None),
    ]
