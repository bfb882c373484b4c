"""`python -m bench.notebooks` as a user runs it: its own name in its usage, `--save` only at
full size (the committed outputs), and one line naming the extra when the extra is missing."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from bench.notebooks import NOTEBOOKS

# The runner with the notebook modules made unimportable, as in an install without the extra.
WITHOUT_EXTRA = (
    "import runpy, sys\n"
    "for name in ('nbformat', 'nbclient', 'ipykernel'):\n"
    "    sys.modules[name] = None\n"
    "sys.argv = ['notebooks.py', *sys.argv[1:]]\n"
    "runpy.run_module('bench.notebooks', run_name='__main__')\n"
)


def _run(*args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    head = ["-c", code] if code else ["-m", "bench.notebooks"]
    return subprocess.run(
        [sys.executable, *head, *args], capture_output=True, text=True, timeout=120
    )


def _digests() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in NOTEBOOKS.glob("*.ipynb")}


def test_its_usage_names_the_command_a_user_types() -> None:
    ran = _run("--help")
    assert ran.returncode == 0
    assert ran.stdout.startswith("usage: python -m bench.notebooks ")


def test_save_at_small_size_is_refused_and_writes_nothing() -> None:
    before = _digests()
    ran = _run("--save", "--only", "tiresias")
    assert ran.returncode == 2
    assert ran.stderr.count("\n") == 1 and "--save needs --full" in ran.stderr
    assert _digests() == before


def test_without_the_extra_it_says_which_to_install_in_one_line() -> None:
    ran = _run("--only", "tiresias", code=WITHOUT_EXTRA)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.count("\n") == 1 and "Traceback" not in ran.stderr
    assert "nbformat, nbclient, ipykernel" in ran.stderr
    assert "pip install -e '.[notebooks]'" in ran.stderr
