"""Large temporaries from the heap while a large solve runs, then memory back to the system.

A solve at a million jobs makes hundreds of arrays of the model's size and drops them (the
interior point a few dozen every iteration). glibc serves an
allocation above its mmap threshold (at most 32 MB) with fresh pages from the kernel and
unmaps them on free, so at a million jobs (80 MB vectors) each temporary is faulted in and
zeroed again, every time: the solve then spends about a third of its time in page faults
(the `fleet` bench rows). With mmap off and no trimming for the duration, freed blocks stay in
the heap and the next temporary of the same size reuses them. Afterwards mmap is allowed again
and `malloc_trim` returns the freed heap, so a long-lived solver process does not keep a large
solve's memory.

The settings are process-wide: a concurrent solve in another thread merely shares them, and
a nested use (the block interior point inside a large library call) leaves them to the
outermost. On a C library other than glibc nothing is changed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

# mallopt parameters (malloc.h, mallopt(3)).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_MMAP_MAX = -4
DEFAULT_MMAP_MAX = 65536
#: glibc's largest mmap threshold: below it a freed block is kept in the heap for reuse (its
#: dynamic threshold climbs here as large blocks are freed). Vectors smaller than this gain
#: nothing from the policy.
WORTH_IT = 32 * 2**20


@cache
def _glibc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt  # noqa: B018 - present on glibc only
        libc.malloc_trim  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


_depth = 0


@contextmanager
def heap_temporaries(vector_bytes: int) -> Iterator[None]:
    """Within this block, arrays come from (and return to) the heap, when vectors of
    `vector_bytes` are large enough for it to matter and the C library is glibc."""
    global _depth
    libc = _glibc() if vector_bytes >= WORTH_IT else None
    if libc is None or _depth:
        yield
        return
    _depth += 1
    libc.mallopt(M_MMAP_MAX, 0)
    libc.mallopt(M_TRIM_THRESHOLD, 2**31 - 1)
    try:
        yield
    finally:
        # Setting any of these ends glibc's dynamic thresholds for the process: leave them
        # where that scheme ends after large frees (mmap at 32 MB, trim at twice that), so
        # the process's later, smaller temporaries keep reusing the heap.
        libc.mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX)
        libc.mallopt(M_MMAP_THRESHOLD, WORTH_IT)
        libc.mallopt(M_TRIM_THRESHOLD, 2 * WORTH_IT)
        libc.malloc_trim(0)
        _depth -= 1
