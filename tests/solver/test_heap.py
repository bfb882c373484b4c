"""The large solves' allocation policy: temporaries reuse the heap inside, and the memory goes
back to the system after. Each case runs in a fresh interpreter (the allocator's state is the
process's: whatever ran before in the test process decides what is free in its heap) and reads
the process's own counters."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from apportion.solver.heap import WORTH_IT, _glibc

pytestmark = pytest.mark.skipif(_glibc() is None, reason="the policy applies to glibc only")

PRELUDE = f"""
import json, resource
import numpy as np
from apportion.solver.heap import heap_temporaries

ENTRIES = {2 * WORTH_IT // 8}  # a vector of twice the size the policy starts at
BYTES = 8 * ENTRIES

def faults():
    '''Minor page faults taken by a temporary made right after one of the same size died.'''
    np.ones(ENTRIES).sum()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    np.ones(ENTRIES).sum()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()
"""


def _run(body: str) -> dict[str, int]:
    script = PRELUDE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return dict(json.loads(done.stdout))


def test_a_temporary_reuses_the_heap_inside_and_is_faulted_in_again_outside() -> None:
    got = _run(
        """
        outside = faults()
        with heap_temporaries(BYTES):
            inside = faults()
        after = faults()
        print(json.dumps({"outside": outside, "inside": inside, "after": after}))
        """
    )
    assert got["outside"] > 0
    assert got["inside"] * 4 < got["outside"]


def test_the_heap_is_given_back_after() -> None:
    got = _run(
        """
        before = resident()
        with heap_temporaries(BYTES):
            held = [np.ones(ENTRIES) for _ in range(4)]
            during = resident()
            del held
        print(json.dumps({"before": before, "during": during, "after": resident()}))
        """
    )
    size = 2 * WORTH_IT
    assert got["during"] - got["before"] >= 3 * size
    assert got["after"] - got["before"] < size


def test_small_vectors_change_nothing() -> None:
    got = _run(
        f"""
        with heap_temporaries({WORTH_IT - 1}):
            inside = faults()
        print(json.dumps({{"inside": inside}}))
        """
    )
    assert got["inside"] > 0


def test_a_nested_use_leaves_the_policy_to_the_outermost() -> None:
    got = _run(
        """
        outside = faults()
        with heap_temporaries(BYTES):
            with heap_temporaries(BYTES):
                pass
            after_inner = faults()
        print(json.dumps({"outside": outside, "after_inner": after_inner}))
        """
    )
    assert got["after_inner"] * 4 < got["outside"]
