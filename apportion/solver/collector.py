"""Python's cyclic garbage collector, held while a request builds its (acyclic) objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Hold the cyclic garbage collector while a request builds its (acyclic) objects.

    A 100,000-job snapshot allocates millions of small objects, and the collector's repeated
    passes over them are a large part of validation. Reference counting still frees everything;
    the collector resumes (and catches up) when the request is done.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
