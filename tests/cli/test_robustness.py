"""Whatever path or file the command line is given, it ends with one line on stderr and an exit
code (2 for bad input), never a traceback or a signal. Run as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from apportion.refdata.synthetic import random_snapshot
from tests.cli.command import run
from tests.conftest import FIXTURES

SNAPSHOT = str(FIXTURES / "gavel_physical_96.json")
PLACEMENT = str(FIXTURES / "deepshare_cluster.json")


def one_line(done: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bad")
    contents: dict[str, bytes] = {
        "deep.json": b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
        "array.json": b"[1, 2]",
        "string.json": b'"snapshot"',
        "empty_array.json": b"[]",
        "latin1.json": b'{"gpu_types": [{"name": "v\xe9", "count": 1}]}',
        "empty.json": b"",
        "huge_int.json": b'{"gpu_types": [{"name": "v", "count": ' + b"9" * 5000 + b"}]}",
        "nul.csv": b"\x00\x01garbage,,,\n",
        "latin1.csv": b"\xff\xfe\x00garbage",
        "garbage.csv": b'a,b\n"unterminated',
    }
    paths = {}
    for name, data in contents.items():
        paths[name] = folder / name
        paths[name].write_bytes(data)
    paths["folder"] = folder
    return paths


@pytest.mark.parametrize(
    "args",
    [
        [SNAPSHOT, "--export", "/nonexistent/x.lp"],  # once exit 139 inside HiGHS
        ["export", SNAPSHOT, "/nonexistent/x.lp"],
        [SNAPSHOT, "--output", "/nonexistent/dir/x.json"],
    ],
    ids=["--export", "export", "--output"],
)
def test_a_path_in_a_missing_folder(args: list[str]) -> None:
    one_line(run(*args), 2, "/nonexistent", "does not exist")


def test_a_folder_given_as_a_file(bad_files: dict[str, Path]) -> None:
    folder = str(bad_files["folder"])
    one_line(run(SNAPSHOT, "--output", folder), 2, "--output", "is a directory")
    one_line(run("export", SNAPSHOT, folder), 2, "is a directory")
    one_line(run(folder), 2, "cannot read", folder)


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("deep.json", "too deeply"),  # RecursionError in the JSON decoder
        ("latin1.json", "cannot read"),
        ("empty.json", "not valid JSON"),
        ("huge_int.json", "not usable JSON"),  # Python's integer-digits limit
        ("array.json", "not a JSON object"),  # once "unexpected AttributeError", exit 1
        ("string.json", "not a JSON object"),
    ],
)
def test_a_bad_snapshot_file(bad_files: dict[str, Path], name: str, needle: str) -> None:
    path = str(bad_files[name])
    one_line(run(path), 2, needle, path)
    one_line(run("export", path, str(bad_files["folder"] / "m.lp")), 2, needle)


@pytest.mark.parametrize("name", ["missing.csv", "nul.csv", "latin1.csv", "garbage.csv", "folder"])
def test_a_bad_contention_csv(bad_files: dict[str, Path], name: str) -> None:
    path = str(bad_files[name]) if name in bad_files else "/nonexistent/missing.csv"
    one_line(run(PLACEMENT, "--contention-csv", path), 2, "contention_csv")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_an_output_that_fails_while_written() -> None:
    one_line(run(SNAPSHOT, "--output", "/dev/full"), 2, "--output", "cannot write")


@pytest.mark.skipif(not Path("/proc/version").exists(), reason="needs /proc")
def test_an_export_the_system_refuses() -> None:
    # A folder that exists but takes no new files (as root, the path checks let it through
    # and only the write fails): once exit 1.
    one_line(run("export", SNAPSHOT, "/proc/apportion-model.lp"), 2, "--export")


def test_threads_beyond_the_machine_are_bad_input(tmp_path: Path) -> None:
    # Once: 100,000 HiGHS threads, and the process aborted ("terminate called ...").
    one_line(run(SNAPSHOT, "-o", "threads=100000"), 2, "options.threads")
    target = str(tmp_path / "m.lp")
    one_line(run("export", SNAPSHOT, target, "-o", "threads=100000"), 2, "options.threads")


@pytest.mark.parametrize(
    "args",
    [["-o", "time_limit=inf"], ["--time-limit", "inf"], ["-o", "threads=true"]],
    ids=["string", "flag", "bool"],
)
def test_mistyped_options_are_bad_input(args: list[str]) -> None:
    key = "threads" if "threads" in args[-1] else "time_limit"
    one_line(run(SNAPSHOT, *args), 2, f"options.{key}")


def test_an_option_value_nested_too_deeply() -> None:
    one_line(run(SNAPSHOT, "-o", "x=" + "[" * 100_000), 2, "--option x")


def test_an_unexpected_error_is_one_line_and_exit_one(tmp_path: Path) -> None:
    # A defect anywhere below the command line: a framework could print a rich traceback.
    (tmp_path / "sitecustomize.py").write_text(
        "import apportion.solver.pipeline\n"
        "def boom(*args, **kwargs):\n"
        "    raise RuntimeError('boom\\nsecond line')\n"
        "apportion.solver.pipeline.solve = boom\n"
    )
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    line = one_line(run(SNAPSHOT, env={"PYTHONPATH": path}), 1, "RuntimeError", "boom")
    assert "second line" in line


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_input_is_refused_at_once() -> None:
    # Once: read whole, a MemoryError and exit 1.
    one_line(run("/dev/zero"), 2, "/dev/zero", "not a JSON object")


def test_an_input_beyond_the_size_limit(tmp_path: Path) -> None:
    # Spaces are JSON whitespace: the file is a valid object, only too large.
    big = tmp_path / "big.json"
    big.write_bytes(Path(SNAPSHOT).read_bytes() + b" " * 5000)
    limit = {"APPORTION_MAX_INPUT_BYTES": str(big.stat().st_size - 1)}
    one_line(run(str(big), env=limit), 2, str(big), f"larger than {big.stat().st_size - 1}")
    done = run(str(big), "--format", "json", env={"APPORTION_MAX_INPUT_BYTES": "100000000"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "optimal"


def test_an_empty_patch_array_is_bad_input(bad_files: dict[str, Path]) -> None:
    # Once accepted as "no changes".
    patch = str(bad_files["empty_array.json"])
    one_line(run("compare", SNAPSHOT, "--patch", patch), 2, patch, "not a JSON object")


@pytest.mark.parametrize(
    ("output", "codes"),
    [
        # Far more JSON than a pipe holds: the write after the reader left must fail.
        (["--format", "json"], {141}),
        # A short table may be written whole before the reader leaves: then exit 0.
        (["--format", "table"], {0, 141}),
    ],
)
def test_a_reader_that_leaves_ends_the_command_quietly(
    tmp_path: Path, output: list[str], codes: set[int]
) -> None:
    """`solve ... | head`: the pipe closes early; the command stops without a word, with the
    exit code of a process ended by SIGPIPE (once: BrokenPipeError and exit 1)."""
    snapshot = tmp_path / "large.json"
    snapshot.write_text(json.dumps(random_snapshot(2000, 4, seed=1)))
    process = subprocess.Popen(
        [sys.executable, "-m", "apportion", str(snapshot), *output],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.read(1)
    process.stdout.close()  # what `head -c 1` does: every later write finds no reader
    errors = process.stderr.read().decode()
    assert process.wait(timeout=120) in codes
    assert first and errors == ""


@pytest.mark.parametrize(
    ("snapshot", "backend", "solver", "needle"),
    [
        # Once (over HTTP): a worker ended by a segmentation fault inside OSQP.
        (SNAPSHOT, "cvxpy", "OSQP", "not offered"),
        (PLACEMENT, "cvxpy", "SCS", "cannot solve MILP"),
        (PLACEMENT, "highs", "ipm", "cannot solve MILP"),
    ],
)
def test_a_solver_the_backend_does_not_offer_is_bad_input(
    snapshot: str, backend: str, solver: str, needle: str
) -> None:
    one_line(run(snapshot, "--backend", backend, "--solver", solver), 2, "options.solver", needle)
