"""Schedule enactment (Tiresias): every running job named by the answer, the rest preempted and
charged their restore when they run again; Tiresias's promotion reset through the answers; the
spread slowdown of a skewed model."""

from __future__ import annotations

from dataclasses import replace

import pytest

from apportion.simulator.config import SimConfig
from apportion.simulator.engine import simulate
from apportion.simulator.traces.tiresias import with_spread_slowdown
from tests.simulator.helpers import job, trace

SPEED = {"gpu": 1.0}


def test_preemption_and_restore_cost() -> None:
    """One GPU, queue limit 100 GPU-seconds: a (1,000 s) runs; b arrives at 150 (top queue) and
    preempts it. b falls to a's queue at 250; a started first, but stopping b would cost 62 s
    for no queue's gain, so b keeps the GPU to its end at 450. a then resumes, paying 62 s of
    restore."""
    jobs = [job("a", 1000.0, speed=SPEED), job("b", 300.0, arrival=150.0, speed=SPEED)]
    config = SimConfig(
        policy="tiresias_las",
        options={"thresholds": [100.0]},
        preemption_seconds=62.0,
    )
    result = simulate(trace(jobs, {"gpu": 1}), config)
    rows = result.records.set_index("job")
    assert rows["first_start"]["b"] == pytest.approx(150.0)
    assert rows["moves"]["a"] == 1
    assert rows["lost_seconds"]["a"] == pytest.approx(62.0)
    assert rows["finish"]["b"] == pytest.approx(450.0)
    # a: 150 s, stopped 150–450, 62 s restore, 850 s more.
    assert rows["finish"]["a"] == pytest.approx(1362.0)


@pytest.mark.parametrize(("knob", "resumes"), [(None, 450.0), (0.5, 375.0)])
def test_promote_knob_brings_a_starved_job_back(knob: float | None, resumes: float) -> None:
    """Queue limits 100 and 200 GPU-seconds, no preemption cost: a runs 0–250 (in the third
    queue from 200); b arrives at 250 and preempts it, and falls to the second queue at 350 and
    to a's at 450, behind a, which then resumes. With PROMOTEKNOB 0.5, a (250 s run) is
    promoted once it has waited 125 s, at 375: alone in the top queue, it preempts b there."""
    jobs = [job("a", 1000.0, speed=SPEED), job("b", 300.0, arrival=250.0, speed=SPEED)]
    options = {"thresholds": [100.0, 200.0], "promote_knob": knob}
    config = SimConfig(policy="tiresias_las", options=options, job_series=True)
    result = simulate(trace(jobs, {"gpu": 1}), config)
    series = result.job_series
    a = series[series["job"] == "a"]
    assert a[a["start"] >= 250.0]["start"].min() == pytest.approx(resumes)


def test_a_skewed_spread_job_runs_slower_and_the_policy_waits_for_a_whole_node() -> None:
    """Three 4-GPU nodes, each with 3 GPUs held until 1,000 s by a skewed job (consolidated by
    either policy). A 2-GPU VGG job arriving at 10 fits only spread over two nodes: the greedy
    baseline starts it there at 1/1.67 of its speed; Tiresias waits for a node at 1,000 s and
    finishes sooner."""
    fillers = [
        job(f"f{i}", 1000.0, gpus=3, speed=SPEED, workload_class="alexnet") for i in range(3)
    ]
    vgg = job("vgg", 2000.0, gpus=2, arrival=10.0, speed=SPEED, workload_class="vgg16")
    cluster = with_spread_slowdown(trace([*fillers, vgg], {"gpu": 12}), 4)
    spread = simulate(cluster, SimConfig(policy="2d_las", mode="schedule"))
    waits = simulate(cluster, SimConfig(policy="tiresias_las", options={"thresholds": [1e9]}))
    # Which filler pairs share a node depends on first fit; the spread start is what matters.
    first = spread.records.set_index("job")
    assert first["first_start"]["vgg"] == pytest.approx(10.0)
    assert first["finish"]["vgg"] == pytest.approx(10.0 + 2000.0 * 1.67)
    second = waits.records.set_index("job")
    assert second["first_start"]["vgg"] == pytest.approx(1000.0)
    assert second["finish"]["vgg"] == pytest.approx(3000.0)


def test_the_slowdown_model_by_nodes_spanned() -> None:
    vgg = job("vgg", 100.0, gpus=8, speed=SPEED, workload_class="vgg16")
    resnet = job("resnet", 100.0, gpus=8, speed=SPEED, workload_class="resnet101")
    out = with_spread_slowdown(trace([vgg, resnet], {"gpu": 16}), 4)
    by_id = {j.id: j for j in out.jobs}
    assert by_id["vgg"].placement_throughput[2] == 1.0  # its fewest nodes
    assert by_id["vgg"].placement_throughput[3] == pytest.approx(1 / 1.67)
    assert by_id["resnet"].placement_throughput == {}  # not skewed: no slowdown
    assert replace(vgg, placement_throughput={}) == replace(by_id["vgg"], placement_throughput={})
