"""`python -m apportion.adapters.ray`: the `apportion-ray` command."""

from __future__ import annotations

from apportion.adapters.ray.cli import run

if __name__ == "__main__":
    run()
