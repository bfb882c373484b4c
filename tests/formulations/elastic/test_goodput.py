"""The goodput model against values worked out by hand from its formulas and Sia's data."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.formulations.elastic.goodput import (
    JobModel,
    PerfParams,
    best_batch,
    efficiency,
    gain,
    iteration_time,
    network_time,
    throughput,
)
from apportion.refdata import sia

PARAMS = PerfParams(0.1, 0.01, 0.2, 0.02, 0.05, 0.005, 2.0)


def test_step_time_by_hand() -> None:
    # 2 nodes, 8 replicas, micro-batch 32, one accumulation step:
    # T_c = 0.1 + 0.01·32 = 0.42; T_n = 0.2 + 0.02·(8 − 2) = 0.32;
    # T_s = sqrt(0.42² + 0.32²) = sqrt(0.2788); T_iter = 0.42 + T_s
    t_iter = 0.42 + 0.2788**0.5
    assert iteration_time(PARAMS, 2, 8, 32, 1) == pytest.approx(t_iter)
    assert throughput(PARAMS, 2, 8, 32, 1) == pytest.approx(8 * 32 * 2 / t_iter)


def test_network_links_by_hand() -> None:
    # one node, 4 replicas: the intra-node link 0.05 + 0.005·2; one replica: no network
    assert network_time(PARAMS, [1, 1, 3], [4, 1, 3]) == pytest.approx([0.06, 1e-8, 0.2 + 0.02 * 1])


def test_efficiency_from_cifar10s_first_epoch() -> None:
    # validation-128.csv, epoch 1: grad_sqr 8.947307535897329, grad_var 5.066593295150894.
    # At M = 1024 (k = 8): r = (5.0666 + 8.9473)/(5.0666/8 + 8.9473) and E = r/8.
    sqr, var = 8.947307535897329, 5.066593295150894
    curve = sia.curves("cifar10")[0]
    assert (curve.batch, curve.grad_sqr[0], curve.grad_var[0]) == (128, sqr, var)
    r = (var + sqr) / (var / 8 + sqr)
    assert gain(1024, 128, sqr, var) == pytest.approx(r)
    assert efficiency(1024, 128, sqr, var) == pytest.approx(r / 8)
    # the noise-scale form (B + M0)/(B + M), B = M0·var/sqr
    noise = 128 * var / sqr
    assert efficiency(1024, 128, sqr, var) == pytest.approx((noise + 128) / (noise + 1024))
    assert efficiency(128, 128, sqr, var) == pytest.approx(1.0)


def test_best_batch_matches_a_brute_force_over_the_same_grid() -> None:
    model = JobModel(PARAMS, 128.0, 4096.0, 8.9, 5.1, 32.0, 1024.0)
    nodes, replicas = np.array([1, 1, 1, 2, 3]), np.array([1, 2, 4, 8, 12])
    got = best_batch(model, nodes, replicas)
    for i, (n, r) in enumerate(zip(nodes, replicas, strict=True)):
        best = (0.0, 0, 0)
        for m in np.geomspace(max(128.0, 32.0 * r), 4096.0, 50):
            local = m / r
            s = int(np.ceil(local / 1024 - 1e-8)) - 1
            if r == 1 and local > 128 + 1e-8:
                s = max(s, 1)
            b = int(np.ceil(local / (s + 1) - 1e-8))
            if not 32 <= b <= 1024:
                continue
            x = throughput(PARAMS, n, r, b, s)[()] * efficiency(r * b * (s + 1), 128, 8.9, 5.1)
            if x > best[0]:
                best = (float(x), b, s)
        assert got.goodput[i] == pytest.approx(best[0])
        assert (got.local_batch[i], got.accumulation[i]) == best[1:]
        assert got.batch[i] == r * best[1] * (best[2] + 1)


def test_a_single_batch_size_is_its_throughput() -> None:
    # M0 = M_max = 128 on one GPU: b = 128, no accumulation, efficiency 1
    model = JobModel(PARAMS, 128.0, 128.0, 1.0, 1.0, 32.0, 1024.0)
    got = best_batch(model, [1], [1])
    t_iter = ((0.1 + 1.28) ** 2 + 1e-8**2) ** 0.5
    assert got.goodput[0] == pytest.approx(128 / t_iter)
    assert got.throughput[0] == pytest.approx(128 / t_iter)
    assert (got.local_batch[0], got.accumulation[0], got.batch[0]) == (128, 0, 128)


def test_no_valid_batch_gives_zero() -> None:
    # 64 replicas × micro-batch at least 32 exceeds M_max = 1024
    model = JobModel(PARAMS, 128.0, 1024.0, 1.0, 1.0, 32.0, 1024.0)
    got = best_batch(model, [8], [64])
    assert got.goodput[0] == 0.0 and got.batch[0] == 0
