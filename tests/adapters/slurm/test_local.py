"""The local cluster's parts that need no cluster: the setup script of the Debian packages
(what it says where apt-get is missing), and the operator's guide agreeing with the code (the
job_submit.lua it shows is the one the local cluster runs; its links resolve)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from apportion.adapters.slurm.local.cluster import job_submit_lua
from apportion.adapters.slurm.local.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "SLURM.md"


def test_the_setup_script_skips_cleanly_without_apt_get(tmp_path: Path) -> None:
    # An empty PATH: Slurm's client commands are not found, and neither is apt-get.
    env = {**os.environ, "PATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "apportion.adapters.slurm.local.packages"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert done.stderr.startswith("slurm packages: skipped: ")
    assert done.stderr.rstrip().endswith(f"there is no apt-get to install {' '.join(PACKAGES)}")
    assert "sbatch" in done.stderr


def test_the_guide_shows_the_job_submit_script_the_local_cluster_runs() -> None:
    blocks = re.findall(r"```lua\n(.*?)```", GUIDE.read_text(), re.S)
    assert blocks == [job_submit_lua(["gpu"], default="gpu")]


def test_the_guide_is_linked_and_its_links_resolve() -> None:
    assert "(docs/SLURM.md)" in (ROOT / "README.md").read_text()
    text = GUIDE.read_text()
    headings = {
        re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.*)$", text, re.M)
    }
    anchors = set(re.findall(r"\]\(#([\w-]+)\)", text))
    assert anchors and anchors <= headings, anchors - headings
    for path in re.findall(r"`((?:adapters|tests)/[\w/.]+)`", text):
        assert (ROOT / path).exists(), path
