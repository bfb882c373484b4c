"""The Debian packages a local Slurm cluster needs (the try-out and the Slurm tests): slurmctld,
slurmd, slurm-client and munge, installed with apt-get as root when a program is missing.

    .venv/bin/python -m apportion.adapters.slurm.local.packages    (as root: sudo ... if not)

Exit code 0 when the programs are there (installed now or before) and when installing is not
possible here (no apt-get, or not root: the line on stderr says so, and the Slurm tests are
then skipped with the same reason); 1 when apt-get failed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
PROGRAMS = ("slurmctld", "slurmd", "munged", "mungekey", "sbatch", "squeue", "sinfo", "scontrol")


class Unavailable(RuntimeError):
    """No Slurm cluster can be had here; the message says why."""


class InstallFailed(Unavailable):
    """apt-get was run and failed."""


def program(name: str) -> str:
    """The path of a Slurm or munge program (daemons live in /usr/sbin, often not on PATH)."""
    return shutil.which(name) or str(Path("/usr/sbin", name))


def missing() -> list[str]:
    """The programs not installed."""
    return [p for p in PROGRAMS if not (shutil.which(p) or Path("/usr/sbin", p).exists())]


def ensure(say: Callable[[str], object] | None = None) -> str:
    """Install the packages when a program is missing; what was done (one line). `say` hears
    what is being installed before apt-get starts (it takes a while, silently).
    `Unavailable` when it cannot be done here, `InstallFailed` when apt-get failed."""
    lacking = missing()
    if not lacking:
        return "Slurm and munge are installed"
    packages = " ".join(PACKAGES)
    if shutil.which("apt-get") is None:
        raise Unavailable(
            f"{', '.join(lacking)} missing and there is no apt-get to install {packages}"
        )
    if os.geteuid() != 0:
        raise Unavailable(f"{', '.join(lacking)} missing; installing {packages} needs root")
    if say is not None:
        say(f"installing {packages} with apt-get ({', '.join(lacking)} missing): about a minute")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES],
    ):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            said = done.stderr.strip()[-300:]
            raise InstallFailed(f"{' '.join(command[:2])} failed: {said}")
    return f"installed {packages}"


def main() -> int:
    try:
        done = ensure(say=lambda line: sys.stderr.write(f"slurm packages: {line}\n"))
    except InstallFailed as exc:
        sys.stderr.write(f"slurm packages: {exc}\n")
        return 1
    except Unavailable as exc:
        sys.stderr.write(f"slurm packages: skipped: {exc}\n")
        return 0
    sys.stderr.write(f"slurm packages: {done}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
