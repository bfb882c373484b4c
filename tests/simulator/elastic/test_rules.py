"""The rules of Sia's simulator the elastic simulation follows, on small hand-built cases:
restarts only on a new GPU type or shape, a refit at every new observation, whole seconds to an
epoch's end, and Sia's layout of configurations on nodes."""

from __future__ import annotations

import pytest

from apportion.mechanism.elastic import Want
from apportion.refdata.sia import application
from apportion.simulator.elastic import jobs as jobs_module
from apportion.simulator.elastic.jobs import ElasticJob
from apportion.simulator.elastic.layout import sia_layout


def test_other_nodes_of_the_same_shape_keep_the_job_running() -> None:
    job = ElasticJob("c", application("cifar10"), arrival=0.0)
    assert job.place(0.0, "a100", {"a100-0": 4}) is True
    job.advance(0.0, 20.0)  # 20 of cifar10's 50 s of restore done
    assert job.place(20.0, "a100", {"a100-1": 4}) is False
    assert job.restarts == 0 and job.delay == pytest.approx(30.0)  # the restore goes on
    assert job.placement == (4,) and job.nodes == {"a100-1": 4}


@pytest.mark.parametrize(
    ("gpu", "nodes"),
    [
        ("a100", {"a100-0": 2, "a100-1": 2}),  # same GPUs, other shape
        ("a100", {"a100-0": 8}),  # more GPUs
        ("rtx2080ti", {"rtx2080ti-0": 4}),  # same shape, other type
    ],
)
def test_a_new_shape_or_type_restarts(gpu: str, nodes: dict[str, int]) -> None:
    job = ElasticJob("c", application("cifar10"), arrival=0.0)
    job.place(0.0, "a100", {"a100-0": 4})
    job.advance(0.0, 60.0)
    assert job.place(60.0, gpu, nodes) is True
    assert job.restarts == 1 and job.delay == 50.0
    assert job.placement == tuple(nodes.values())


def test_a_stopped_job_restarts_on_the_same_shape() -> None:
    job = ElasticJob("c", application("cifar10"), arrival=0.0)
    job.place(0.0, "t4", {"t4-0": 2})
    job.advance(0.0, 60.0)
    job.place(60.0, None, {})
    assert job.place(120.0, "t4", {"t4-0": 2}) is True and job.restarts == 1


def test_every_new_observation_is_fitted(monkeypatch: pytest.MonkeyPatch) -> None:
    fits: list[int] = []
    real = jobs_module.fit_perf_params  # type: ignore[attr-defined]

    def counted(*args: object, **kwargs: object) -> object:
        fits.append(len(args[0]))  # type: ignore[arg-type]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jobs_module, "fit_perf_params", counted)
    job = ElasticJob("c", application("cifar10"), arrival=0.0)
    job.place(0.0, "t4", {"t4-0": 1})
    job.advance(0.0, 60.0)
    job.advance(60.0, 60.0)  # the same configuration again: nothing new
    assert fits == [1]
    job.place(120.0, "t4", {"t4-0": 2})
    job.advance(120.0, 60.0)
    # one fit per new (nodes, replicas, micro-batch), each over all observations so far
    assert fits == list(range(1, len(job.seen["t4"]) + 1)) and len(fits) >= 2


def test_an_epoch_ends_on_a_whole_second() -> None:
    job = ElasticJob("b", application("bert"), arrival=0.0)
    job.place(0.0, "a100", {"a100-0": 4})
    now = 0.0
    while not job.done:
        job.advance(now, 60.0)
        now += 60.0
    assert job.finish is not None and job.finish == int(job.finish)


def test_sia_lays_out_the_largest_first_from_a_moving_cursor() -> None:
    nodes = [("t4-0", 4, "t4"), ("t4-1", 4, "t4"), ("a100-0", 8, "a100")]
    wanted = {"x": Want("t4", 3), "y": Want("t4", 3), "z": Want("t4", 2), "w": Want("a100", 8)}
    # x: 3 on t4-0, cursor to t4-1; y: 3 there, cursor wraps to t4-0; z: the 1 + 1 left
    assert sia_layout(nodes, wanted) == {
        "x": {"t4-0": 3},
        "y": {"t4-1": 3},
        "z": {"t4-0": 1, "t4-1": 1},
        "w": {"a100-0": 8},
    }


def test_sia_takes_whole_nodes_first_and_skips_what_does_not_fit() -> None:
    nodes = [(f"n{i}", 4, "t4") for i in range(3)]
    wanted = {"small": Want("t4", 1), "big": Want("t4", 8, 2), "late": Want("t4", 4)}
    # by GPUs: big takes n0, n1 whole; late (4) n2; small finds nothing free and is skipped
    assert sia_layout(nodes, wanted) == {"big": {"n0": 4, "n1": 4}, "late": {"n2": 4}}


def _ran(target: int | None) -> ElasticJob:
    job = ElasticJob("y", application("yolov3"), arrival=0.0, target_batch=target)
    job.place(0.0, "t4", {"t4-0": 4})
    for now in (0.0, 60.0, 120.0):
        job.advance(now, 60.0)
    return job


def test_configurations_are_valued_up_to_the_trace_batch_only() -> None:
    from apportion.refdata.sia import SIA_CLUSTER
    from apportion.simulator.elastic.belief import cluster_shapes, offer

    app = application("yolov3")
    capped, free = _ran(app.init_batch), _ran(None)
    assert capped.params == free.params  # the job ran alike: only its valuation differs
    shapes = cluster_shapes(SIA_CLUSTER)
    for (shape, config), (_, unbounded) in zip(
        offer(capped, shapes, SIA_CLUSTER), offer(free, shapes, SIA_CLUSTER), strict=True
    ):
        # at M0 for one GPU's worth, else exactly b_min·R (the only size Sia then samples)
        low = max(app.init_batch, app.min_local_batch(shape.gpu) * shape.gpus)
        assert config["batch_size"] == low
        assert config["goodput"] <= unbounded["goodput"] * (1 + 1e-9)
    # the batch the job trains at is not bounded by the trace's
    assert capped.gpus * capped.micro * (capped.steps + 1) > app.init_batch


@pytest.mark.parametrize("app_name", ["cifar10", "yolov3", "imagenet"])
def test_a_new_job_is_tied_across_types_unless_its_throughputs_are_known(app_name: str) -> None:
    from apportion.refdata.sia import SIA_CLUSTER
    from apportion.simulator.elastic.belief import cluster_shapes, offer
    from apportion.simulator.elastic.policies import ApportionElastic

    app = application(app_name)
    job = ElasticJob("new", app, arrival=0.0)
    shapes = cluster_shapes(SIA_CLUSTER)
    tied = offer(job, shapes, SIA_CLUSTER)
    assert [(s.gpu, s.gpus, c["goodput"]) for s, c in tied] == [
        (gpu, 1, 1.0) for gpu in SIA_CLUSTER.gpus_per_node
    ]
    # known: samples/s of the largest one-GPU micro-batch over the slowest one-GPU step
    # measured on the type (read from the profile's rows, as Sia's simulator reads them)
    rate = {}
    for gpu, profile in app.profiles.items():
        rows = [(b, t) for r, b, t in zip(profile.replicas, profile.local_batch,
                profile.step_time, strict=True) if r == 1]  # fmt: skip
        rate[gpu] = max(b for b, _ in rows) / max(t for _, t in rows)
    known = offer(job, shapes, SIA_CLUSTER, known_start=True)
    assert [(s.gpu, s.gpus) for s, _ in known] == [(s.gpu, s.gpus) for s, _ in tied]
    assert [c["goodput"] for _, c in known] == pytest.approx([rate[s.gpu] for s, _ in known])
    # alone on the cluster, Sia's policy then starts it on its fastest type, on one GPU
    decider = ApportionElastic("sia", SIA_CLUSTER, known_start=True)
    placed = decider.decide(0.0, [job])["new"]
    assert sum(placed.values()) == 1
    assert {node.rsplit("-", 1)[0] for node in placed} == {max(rate, key=rate.__getitem__)}
