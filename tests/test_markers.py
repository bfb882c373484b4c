"""The quick subset (`pytest -m "not slow"`) leaves out what starts a service, a notebook
kernel, a browser or a live Slurm cluster, and the tests listed as slow; it keeps the rest.
Read from pytest's own collection, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = (
    "tests/client/test_sync.py",  # the real service
    "tests/notebooks/test_committed.py",
    "tests/api/test_web.py",  # a headless browser, on the real service
    "tests/adapters/slurm/test_live_rounds.py",  # a live Slurm cluster
    "tests/simulator/elastic/test_ones.py",  # listed as slow
    "tests/test_import_cycles.py",
    "tests/mechanism/test_columns.py",
)
PROBE = """
import json, sys, pytest
class Marks:
    def pytest_collection_finish(self, session):
        marks = {}
        for item in session.items:
            marks.setdefault(item.nodeid.split("::")[0], set()).update(
                m.name for m in item.iter_markers() if m.name != "parametrize")
        print("MARKS " + json.dumps({k: sorted(v) for k, v in marks.items()}))
pytest.main(["--collect-only", "-qq", "-p", "no:cacheprovider", *sys.argv[1:]], plugins=[Marks()])
"""


def test_each_need_has_its_marker_and_the_quick_subset_keeps_the_rest() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    marks = json.loads(done.stdout.rsplit("MARKS ", 1)[1].splitlines()[0])
    assert marks == {
        "tests/client/test_sync.py": ["service", "slow"],
        "tests/notebooks/test_committed.py": ["notebook", "slow"],
        "tests/api/test_web.py": ["browser", "service", "slow"],
        "tests/adapters/slurm/test_live_rounds.py": ["slow", "slurm"],
        "tests/simulator/elastic/test_ones.py": ["slow"],
        "tests/test_import_cycles.py": [],
        "tests/mechanism/test_columns.py": [],
    }
