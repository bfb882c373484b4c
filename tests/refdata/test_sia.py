"""Sia's bundled data reads back as the artifact describes it."""

from __future__ import annotations

import pytest

from apportion.refdata import sia


def test_saturn_workload_one_is_the_documented_mix() -> None:
    jobs = sia.workload("saturn", 1)
    assert len(jobs) == 160
    counts = {m: sum(j.application == m for j in jobs) for m in sia.MODELS}
    assert counts == {"cifar10": 134, "deepspeech2": 10, "yolov3": 7, "bert": 6, "imagenet": 3}
    assert min(j.num_replicas for j in jobs) == 4
    assert max(j.num_replicas for j in jobs) == 16
    assert jobs[0].name == "cifar10-0" and jobs[0].time == 401.0 and jobs[0].batch_size == 4096
    # 8 hours of arrivals at 20 jobs per hour
    assert max(j.time for j in jobs) < 8 * 3600


def test_every_bundled_workload_reads() -> None:
    sizes = [len(sia.workload("saturn", n)) for n in range(1, 11)]
    sizes += [len(sia.workload("philly", n)) for n in range(1, 9)]
    assert sizes == [160] * 18
    # rate_r: r jobs per hour over 8 hours
    for rate in (10, 30, 50):
        assert len(sia.workload("saturn", 1, rate=rate)) == pytest.approx(8 * rate, rel=0.1)


def test_scale_workload_issues_each_job_k_times() -> None:
    jobs = sia.scale_workload(32)
    assert len(jobs) == 5_120
    assert len({j.name for j in jobs}) == 5_120
    first = [j for j in jobs if j.time == 401.0]
    assert len(first) == 32 and {j.batch_size for j in first} == {4096}


def test_unknown_workload_family_names_the_choices() -> None:
    with pytest.raises(KeyError, match="saturn, philly"):
        sia.workload("helios", 1)


def test_epoch_targets_are_the_documented_ones() -> None:
    # Sia's completion rule: the least end-of-last-epoch progress over the curves (README §5)
    targets = {m: sia.application(m).target() for m in sia.MODELS}
    assert targets["bert"] == pytest.approx(14774.0)
    assert targets["cifar10"] == pytest.approx(39062.9, abs=0.01)
    assert targets["deepspeech2"] == pytest.approx(28536.0)
    assert targets["imagenet"] == pytest.approx(576525.6, abs=0.01)
    assert targets["yolov3"] == pytest.approx(103443.98, abs=0.01)


def test_batch_limits_are_the_simulators() -> None:
    app = sia.application("deepspeech2")
    assert (app.init_batch, app.max_batch) == (20, 640)
    assert app.min_local_batch("t4") == 10
    assert [app.max_local_batch(g) for g in ("t4", "a100", "rtx2080ti")] == [80, 320, 57]
    assert sia.application("imagenet").max_local_batch("a100") == 800
    assert sia.application("bert").epochs == 2


def test_profile_rows_and_the_single_gpu_rate() -> None:
    p = sia.profile("cifar10", "t4")
    assert p.placement[:1] == ["1"] and p.local_batch[0] == 32.0
    assert p.step_time[0] == pytest.approx(0.0427886962890625)
    # largest 1-GPU local batch 1024 over the largest 1-GPU step time (0.70209 s, at 1024)
    assert p.single_gpu_throughput() == pytest.approx(1024 / 0.7020925283432007)
    spread = [i for i, d in enumerate(p.placement) if d == "22"]
    assert spread and all(p.nodes[i] == 2 and p.replicas[i] == 4 for i in spread)


def test_default_cluster_is_64_gpus() -> None:
    assert sia.SIA_CLUSTER.gpus == {"t4": 24, "a100": 16, "rtx2080ti": 24}
    assert sum(sia.SIA_CLUSTER.scaled(32).gpus.values()) == 2_048
