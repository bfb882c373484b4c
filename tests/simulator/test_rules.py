"""One world for every policy: a trace's placement rules (jobs span nodes as profiled) bind
policies and baselines alike, baselines place as DeepShare's do (or packed) and preempt, and
DeepShare's own contention model (floored ratios that persist) is an option."""

from __future__ import annotations

from dataclasses import replace

import pytest

from apportion.simulator.clients import PolicyError
from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.trace import PlacementRules, Trace
from apportion.simulator.traces.deepshare import read_deepshare_trace
from apportion.solver.snapshot.contention import ClassDefault, ContentionTable
from tests.simulator.helpers import job, trace

SPEED = {"gpu": 1.0}


def _profiled(name: str, seconds: float, gpus: int, cls: str, spans: tuple[int, ...]) -> object:
    """A job profiled on `spans` nodes only, at one speed."""
    return replace(
        job(name, seconds, gpus=gpus, speed=SPEED, workload_class=cls),
        placement_throughput=dict.fromkeys(spans, 1.0),
    )


def _world(jobs: list, table: ContentionTable | None = None, nodes: int = 4) -> Trace:
    base = trace(jobs, {"gpu": 4 * nodes}, per_node=4)
    return replace(base, contention=table, rules=PlacementRules(profiled_spans=True))


def test_deepshare_traces_state_their_rules_and_every_shape_they_allow_spans_nodes() -> None:
    trace0 = read_deepshare_trace()
    assert trace0.rules == PlacementRules(profiled_spans=True)
    shapes = {trace0.rules.shapes(j, 8) for j in trace0.jobs}
    assert shapes == {((2, 1),), ((2, 2), (4, 1)), ((2, 4), (4, 2))}


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("reference", {"gpu-0": 1, "gpu-1": 1, "gpu-2": 1, "gpu-3": 1}),
        ("pack", {"gpu-0": 2, "gpu-1": 2}),
    ],
)
def test_baselines_spread_as_deepshare_places_them_or_packed(style: str, expected: dict) -> None:
    """A 4-GPU job profiled on 2 and 4 nodes: DeepShare's baselines take the widest shape on the
    first nodes (4 × 1), `pack` the fewest nodes (2 × 2); never one node."""
    from apportion.simulator.engine import Engine

    world = _world([_profiled("a", 100.0, 4, "X", (2, 4))])
    engine = Engine(world, SimConfig(policy="srtf", options={"placement": style}))
    engine.table.admit(0.0)
    engine.enactor.decide(0.0, True)
    assert list(engine.enactor.holdings.previous.values()) == [expected]


def test_a_baseline_preempts_every_round_under_the_rules() -> None:
    """LAS on one 2-node slot: two 2-GPU jobs of 600 s take turns every 300-s round, so they end
    at 900 s and 1200 s, each having run 600 s."""
    jobs = [_profiled(n, 600.0, 2, "X", (2,)) for n in ("a", "b")]
    world = _world(jobs, nodes=2)
    world = replace(world, cluster=trace(jobs, {"gpu": 2}, per_node=1).cluster)
    result = simulate(world, SimConfig(policy="las", round_seconds=300.0))
    finish = result.records.set_index("job")["finish"]
    assert sorted(finish.tolist()) == pytest.approx([900.0, 1200.0])
    assert result.summary["run_time_mean"] == pytest.approx(600.0)  # DeepShare's JCT
    assert result.summary["jct_mean"] == pytest.approx(1050.0)


def test_a_policy_that_breaks_the_rules_stops_the_run() -> None:
    world = _world([_profiled("a", 100.0, 2, "X", (2,))])
    config = SimConfig(policy="contention_placement", options={"shapes": {"2": [[1, 2]]}})
    with pytest.raises(PolicyError, match="placement rules forbid"):
        simulate(world, config)


def test_rounds_mode_is_refused_on_a_trace_with_rules() -> None:
    world = _world([_profiled("a", 100.0, 2, "X", (2,))])
    with pytest.raises(ValueError, match="only placement mode obeys"):
        simulate(world, SimConfig(policy="srtf", mode="rounds"))  # type: ignore[arg-type]


def _halving(cs: float) -> ContentionTable:
    return ContentionTable(
        class_defaults=[
            ClassDefault(target_class="X", co_runner_class="Y", cs=cs),
            ClassDefault(target_class="Y", co_runner_class="X", cs=cs),
        ]
    )


@pytest.mark.parametrize(
    ("model", "cs", "y_finish"),
    [
        # X (1000 s) and Y (3000 s) at half speed until X ends at 2000 s: Y's 2000 s left run
        # alone at full speed (current) or still at half speed (DeepShare's, which keeps it).
        ("current", 2.0, 4000.0),
        ("reference", 2.0, 6000.0),
        # CS 4 is a ratio of 0.25, floored at 0.35 by DeepShare: X ends at 1000 / 0.35 s.
        ("reference", 4.0, 1000.0 / 0.35 + (3000.0 - 1000.0) / 0.35),
    ],
)
def test_contention_models(model: str, cs: float, y_finish: float) -> None:
    jobs = [
        _profiled("x", 1000.0, 2, "X", (2,)),
        _profiled("y", 3000.0, 2, "Y", (2,)),
    ]
    world = replace(
        _world(jobs, _halving(cs), nodes=2), cluster=trace(jobs, {"gpu": 4}, per_node=2).cluster
    )
    config = SimConfig(
        policy="contention_placement",
        options={"w1": 0.0, "moves": "none"},
        contention=model,  # type: ignore[arg-type]
    )
    finish = simulate(world, config).records.set_index("job")["finish"]
    assert finish["y"] == pytest.approx(y_finish)
