"""`apportion-ray` as users and operators run it: submit, list and cancel on the queue file
(no Ray needed), bad input refused in one line with exit code 2, and `run` against the live
cluster: a dry run prints the round's commands, a table naming a type the cluster lacks is
refused before any round."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from apportion.adapters.ray.cli import main
from apportion.adapters.ray.local.cluster import LocalRay
from apportion.adapters.ray.queue import JobQueue
from tests.adapters.ray.driving import TABLE, clear, groups


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


def test_submit_list_cancel(tmp_path: Path) -> None:
    file = f"--queue-file={tmp_path / 'q.sqlite'}"
    code, out = _run(
        ["submit", file, "--gpus", "4", "--model", "lm", "--", "python", "t.py", "a b"]
    )
    assert code == 0 and out == "1\n"
    code, out = _run(["submit", file, "--gpus", "2", "--model", "gan", "--weight", "2", "--", "x"])
    assert (code, out) == (0, "2\n")
    job = JobQueue(tmp_path / "q.sqlite").get("1")
    assert (job.gpus, job.key, job.entrypoint, job.state) == (
        4,
        "lm",
        "python t.py 'a b'",
        "queued",
    )
    assert _run(["cancel", file, "2"])[0] == 0
    code, out = _run(["list", file])
    assert code == 0 and [line.split()[:4] for line in out.splitlines()[1:]] == [
        ["1", "queued", "4", "lm"]
    ]
    code, out = _run(["list", file, "--all"])
    assert [line.split()[1] for line in out.splitlines()[1:]] == ["queued", "cancelled"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["submit", "--gpus", "0", "--model", "lm", "--", "x"], "gpus: 0 must be a whole number"),
        (["submit", "--gpus", "1", "--model", "lm"], "entrypoint: give the command after `--`"),
        (["submit", "--gpus", "1", "--model", "lm", "--weight", "0", "--", "x"], "weight: 0.0"),
        (["cancel", "9"], "job 9: no such job in queue 'default'"),
        (["list", "--queue", "a/b"], "queue: 'a/b' must be one word"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code = main([*argv[:1], f"--queue-file={tmp_path / 'q.sqlite'}", *argv[1:]])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"apportion-ray: error: {message}") and err.count("\n") == 1


def test_run_dry_prints_the_round_and_a_foreign_type_is_refused(
    ray_cluster: LocalRay, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queue = JobQueue(tmp_path / "q.sqlite")
    queue.submit("lm", 8, "sleep 600")
    queue.submit("bert", 1, "sleep 600")
    table = tmp_path / "table.json"
    table.write_text(json.dumps(TABLE))
    common = [
        "run",
        f"--queue-file={queue.path}",
        f"--address={ray_cluster.address}",
        f"--state={tmp_path / 'state.json'}",
        "--rounds=1",
    ]
    try:
        code = main([*common, f"--throughputs={table}", "--dry-run"])
        out = capsys.readouterr().out
        assert code == 0
        assert "# round 1 (dry run: nothing is changed)" in out
        assert "# job 1 (lm, 8 GPUs): start: runs on " in out
        assert "# job 2: skip: left alone: no throughput row for 'bert'" in out
        assert [line.split()[:2] for line in out.splitlines() if not line.startswith("#")] == [
            ["start", "1"]
        ]
        assert groups() == {} and queue.get("1").state == "queued"
        table.write_text(json.dumps({"lm": {"a100": 3.0}}))
        assert main([*common, f"--throughputs={table}"]) == 2
        err = capsys.readouterr().err.splitlines()[-1]
        assert err.startswith("apportion-ray: error: throughputs.lm.a100: not a GPU type")
    finally:
        clear(queue)
