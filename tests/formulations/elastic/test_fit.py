"""Fitting the throughput model: known parameters are recovered, the data's step times are
reproduced, and what the data cannot support is pinned as Pollux pins it."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.formulations.elastic.fit import FLOOR, fit_perf_params
from apportion.formulations.elastic.goodput import (
    PerfParams,
    compute_time,
    iteration_time,
    network_time,
    sync_step_time,
)
from apportion.refdata import sia

TRUE = PerfParams(0.05, 0.004, 0.12, 0.01, 0.03, 0.004, 1.8)


def _observed(params: PerfParams) -> tuple[np.ndarray, ...]:
    nodes = np.array([1, 1, 1, 1, 2, 2, 3, 4, 1, 2])
    replicas = np.array([1, 2, 4, 4, 4, 8, 12, 16, 1, 8])
    batch = np.array([32, 32, 64, 128, 64, 32, 64, 128, 128, 256], dtype=float)
    tc = compute_time(params, batch)
    step = sync_step_time(params, tc, network_time(params, nodes, replicas))
    return nodes, replicas, batch, step, step - tc


def test_recovers_step_times_of_known_parameters() -> None:
    nodes, replicas, batch, step, sync = _observed(TRUE)
    fitted = fit_perf_params(nodes, replicas, batch, step, sync)
    predicted = iteration_time(fitted, nodes, replicas, batch)
    assert np.max(np.abs(predicted / step - 1)) < 0.02
    assert fitted.alpha_c == pytest.approx(TRUE.alpha_c, rel=0.05)
    assert fitted.beta_c == pytest.approx(TRUE.beta_c, rel=0.05)


def test_reproduces_sias_profiles() -> None:
    # the whole A100 profile of BERT: half the configurations within 2 %, nine in ten within 5 %
    p = sia.profile("bert", "a100")
    fitted = fit_perf_params(p.nodes, p.replicas, p.local_batch, p.step_time, p.sync_time)
    error = np.abs(iteration_time(fitted, p.nodes, p.replicas, p.local_batch) / p.step_time - 1)
    assert np.median(error) < 0.02
    assert np.quantile(error, 0.9) < 0.05


def test_one_batch_size_pins_the_constant_compute_time() -> None:
    nodes, replicas, batch, step, sync = _observed(TRUE)
    keep = batch == 32
    fitted = fit_perf_params(nodes[keep], replicas[keep], batch[keep], step[keep], sync[keep])
    assert fitted.alpha_c == pytest.approx(np.mean(step[keep] - sync[keep]) / 2)


def test_single_node_observations_keep_the_network_prior() -> None:
    nodes, replicas, batch, step, sync = _observed(TRUE)
    keep = nodes == 1
    fitted = fit_perf_params(nodes[keep], replicas[keep], batch[keep], step[keep], sync[keep])
    # no multi-node point: inter-node at least 1.1 × intra-node
    assert fitted.alpha_n >= 1.1 * fitted.alpha_r - 1e-12
    assert fitted.beta_n >= 1.1 * fitted.beta_r - 1e-12


def test_one_gpu_pins_every_network_term() -> None:
    fitted = fit_perf_params([1, 1], [1, 1], [32, 64], [0.2, 0.35], [1e-4, 1e-4])
    assert (fitted.alpha_r, fitted.beta_r, fitted.beta_n) == (FLOOR, FLOOR, pytest.approx(1.1e-8))
    # compute time is linear in the micro-batch: two points determine it
    assert fitted.beta_c == pytest.approx((0.35 - 0.2) / 32, rel=0.02)


def test_bad_observations_are_refused() -> None:
    with pytest.raises(ValueError, match="no observations"):
        fit_perf_params([], [], [], [], [])
    with pytest.raises(ValueError, match="exceed sync"):
        fit_perf_params([1], [1], [32], [0.1], [0.2])
