"""The simulated step time against Sia's profile rows, interpolated by hand."""

from __future__ import annotations

import pytest

from apportion.simulator.elastic.truth import canonical, truth


def test_a_measured_placement_interpolates_in_the_micro_batch() -> None:
    # placements-aws.csv of cifar10, placement "2": (32, 0.04904516, 0.00424130) and
    # (45, 0.05620437, 0.00220614); at 40 the weights are 5/13 and 8/13
    step, sync = truth("cifar10", "t4").step_time((2,), 40)
    assert step == pytest.approx(0.04904515743255615 * 5 / 13 + 0.056204366683959964 * 8 / 13)
    assert sync == pytest.approx(0.004241296052932739 * 5 / 13 + 0.0022061408042907712 * 8 / 13)
    exact = truth("cifar10", "t4").step_time((2,), 32)
    assert exact == pytest.approx((0.04904515743255615, 0.004241296052932739))


def test_outside_what_was_measured_nothing_runs() -> None:
    assert truth("cifar10", "t4").step_time((2,), 16) is None
    assert truth("cifar10", "t4").step_time((), 32) is None


def test_unmeasured_placements_are_interpolated_between_neighbours() -> None:
    # 3 GPUs on one node was not profiled: it lies between 2 and 4 GPUs at the same batch
    measured = truth("cifar10", "t4")
    three = measured.step_time((3,), 64)
    assert three is not None
    two, four = measured.step_time((2,), 64), measured.step_time((4,), 64)
    assert two is not None and four is not None
    assert min(two[0], four[0]) <= three[0] <= max(two[0], four[0])


def test_placements_are_rotated_to_their_smallest_form() -> None:
    assert canonical((4, 2, 0, 4)) == "244"
    assert canonical((1,)) == "1"
