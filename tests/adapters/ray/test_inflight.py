"""A round's calls in flight: a job's calls run in order, the later only when the earlier
succeeded; different jobs' calls run at once; `finish` waits for all and says how each ended."""

from __future__ import annotations

import threading

from apportion.adapters.ray.inflight import InFlight


def test_calls_of_different_jobs_run_at_once() -> None:
    calls = InFlight(workers=4)
    together = threading.Barrier(4, timeout=10.0)  # passes only if four calls run at once

    def meet() -> None:
        together.wait()

    for job in "abcd":
        calls.submit(job, ("start", job), meet)
    ended = calls.finish()
    assert [(e.job, e.error) for e in ended] == [(j, None) for j in "abcd"]
    assert len(calls) == 0
    calls.close()


def test_a_jobs_calls_run_in_order_and_stop_at_the_first_failure() -> None:
    calls = InFlight(workers=4)
    done: list[str] = []
    release = threading.Event()

    def stop() -> None:
        release.wait(10.0)  # slow: the start must still wait for it
        done.append("stop 1")

    def refused() -> None:
        raise RuntimeError("placement group apportion-q-2.1: name taken")

    calls.submit("1", ("stop", "1"), stop)
    calls.submit("1", ("start", "1"), lambda: done.append("start 1"))
    calls.submit("2", ("stop", "2"), refused)
    calls.submit("2", ("start", "2"), lambda: done.append("start 2"))
    calls.submit("3", ("start", "3"), lambda: done.append("start 3"))
    release.set()
    ended = {e.command: e.error for e in calls.finish()}
    assert done.index("stop 1") < done.index("start 1")
    assert "start 2" not in done and "start 3" in done
    assert ended[("stop", "1")] is None and ended[("start", "1")] is None
    assert ended[("stop", "2")] == "placement group apportion-q-2.1: name taken"
    assert ended[("start", "2")] is not None and "previous command failed" in ended[("start", "2")]
    calls.close()
