"""`python -m adapters.slurm`: the `apportion-slurm` controller."""

from __future__ import annotations

from apportion.adapters.slurm.cli import run

if __name__ == "__main__":
    run()
