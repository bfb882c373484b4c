"""The job queue in SQLite: what a submission must carry (errors name the field), state
changes that survive reopening the file, and queues that do not see each other's jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from apportion.adapters.ray.queue import JobQueue, QueueError


def test_a_job_survives_reopening_the_file_with_every_change(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    first = JobQueue(path)
    job = first.submit("resnet50", 4, "python train.py", weight=2.0, cwd="/srv")
    first.started(job.id, "v100", {"n1": 2, "n2": 2})
    first.close()
    again = JobQueue(path)
    seen = again.get(job.id)
    assert (seen.state, seen.starts, seen.gpu_type) == ("running", 1, "v100")
    assert dict(seen.placement or {}) == {"n1": 2, "n2": 2}
    assert (seen.key, seen.gpus, seen.weight, seen.cwd) == ("resnet50", 4, 2.0, "/srv")
    again.requeued(job.id)
    again.started(job.id, "k80", {"n3": 4})
    again.ended(job.id, 3)
    ended = JobQueue(path).get(job.id)
    assert (ended.state, ended.exit_code, ended.starts) == ("failed", 3, 2)
    assert [j.id for j in JobQueue(path).jobs(("queued", "running"))] == []


def test_an_ended_job_is_not_requeued_or_ended_again(tmp_path: Path) -> None:
    queue = JobQueue(tmp_path / "q.sqlite")
    job = queue.submit("lm", 1, "true")
    queue.started(job.id, "v100", {"n1": 1})
    queue.ended(job.id, 0)
    queue.requeued(job.id)  # a late requeue must not bring a finished job back
    queue.ended(job.id, 9)
    assert (queue.get(job.id).state, queue.get(job.id).exit_code) == ("done", 0)
    with pytest.raises(QueueError, match=f"job {job.id}: is done"):
        queue.cancel(job.id)


def test_queues_in_one_file_keep_their_own_jobs(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    mine, theirs = JobQueue(path, "a"), JobQueue(path, "b")
    kept = mine.submit("lm", 2, "true")
    other = theirs.submit("lm", 2, "true")
    assert [j.id for j in mine.jobs()] == [kept.id]
    with pytest.raises(QueueError, match=f"job {other.id}: no such job in queue 'a'"):
        mine.get(other.id)


@pytest.mark.parametrize(
    ("key", "gpus", "entrypoint", "weight", "field"),
    [
        ("lm", 0, "true", 1.0, "gpus: 0"),
        ("lm", True, "true", 1.0, "gpus: True"),
        (" ", 1, "true", 1.0, "model: "),
        ("lm", 1, "  ", 1.0, "entrypoint: "),
        ("lm", 1, "true", float("nan"), "weight: nan"),
        ("lm", 1, "true", -1.0, "weight: -1.0"),
    ],
)
def test_a_bad_submission_is_refused_naming_the_field(
    tmp_path: Path, key: str, gpus: int, entrypoint: str, weight: float, field: str
) -> None:
    queue = JobQueue(tmp_path / "q.sqlite")
    with pytest.raises(QueueError) as caught:
        queue.submit(key, gpus, entrypoint, weight=weight)
    assert str(caught.value).startswith(field)
    assert queue.jobs() == []


def test_a_queue_name_with_a_separator_is_refused(tmp_path: Path) -> None:
    with pytest.raises(QueueError, match="queue: 'a-b/c'"):
        JobQueue(tmp_path / "q.sqlite", "a-b/c")


def test_a_batch_is_one_transaction_all_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    queue = JobQueue(path)
    a, b = queue.submit("lm", 1, "true"), queue.submit("lm", 2, "true")
    with queue.batch():
        queue.started(a.id, "v100", {"n1": 1})
        queue.started(b.id, "k80", {"n3": 2})
        # Another connection sees nothing of the batch before it commits.
        assert {j.state for j in JobQueue(path).jobs()} == {"queued"}
    assert {j.state for j in JobQueue(path).jobs()} == {"running"}
    with pytest.raises(RuntimeError, match="killed"), queue.batch():
        queue.requeued(a.id)
        raise RuntimeError("killed mid-round")
    assert JobQueue(path).get(a.id).state == "running"  # rolled back
    queue.requeued(a.id)  # outside a batch: committed at once
    assert JobQueue(path).get(a.id).state == "queued"


def test_a_start_ray_holds_is_adopted_once(tmp_path: Path) -> None:
    queue = JobQueue(tmp_path / "q.sqlite")
    job = queue.submit("lm", 2, "true")
    queue.adopt(job.id, 3, "v100", {"n1": 2})  # its third start, never recorded
    seen = queue.get(job.id)
    assert (seen.state, seen.starts, seen.gpu_type, dict(seen.placement or {})) == (
        "running",
        3,
        "v100",
        {"n1": 2},
    )
    queue.adopt(job.id, 2, "k80", {"n3": 2})  # an older start changes nothing
    assert (queue.get(job.id).starts, queue.get(job.id).gpu_type) == (3, "v100")
