"""The large solves' allocation policy: temporaries reuse the heap inside, and the memory goes
back to the system after (read from the process's own counters)."""

from __future__ import annotations

import resource

import numpy as np
import pytest

from apportion.solver.heap import WORTH_IT, _glibc, heap_temporaries

pytestmark = pytest.mark.skipif(_glibc() is None, reason="the policy applies to glibc only")

ENTRIES = 2 * WORTH_IT // 8  # a vector of twice the size the policy starts at


def _faults_of_second_temporary() -> int:
    """Minor page faults taken by a temporary made right after one of the same size died."""
    np.ones(ENTRIES).sum()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    np.ones(ENTRIES).sum()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def test_a_temporary_reuses_the_heap_inside_and_is_faulted_in_again_outside() -> None:
    outside = _faults_of_second_temporary()
    with heap_temporaries(8 * ENTRIES):
        inside = _faults_of_second_temporary()
    assert outside > 0
    assert inside * 4 < outside


def test_the_heap_is_given_back_after() -> None:
    before = _resident_bytes()
    with heap_temporaries(8 * ENTRIES):
        held = [np.ones(ENTRIES) for _ in range(4)]
        during = _resident_bytes()
        del held
    after = _resident_bytes()
    assert during - before >= 3 * 8 * ENTRIES
    assert after - before < 8 * ENTRIES


def test_small_vectors_change_nothing() -> None:
    with heap_temporaries(WORTH_IT - 1):
        inside = _faults_of_second_temporary()
    assert inside > 0


def test_a_nested_use_leaves_the_policy_to_the_outermost() -> None:
    with heap_temporaries(8 * ENTRIES):
        with heap_temporaries(8 * ENTRIES):
            pass
        after_inner = _faults_of_second_temporary()
    outside = _faults_of_second_temporary()
    assert after_inner * 4 < outside
