"""`python -m apportion` is the `solve` command."""

from apportion.cli import run

run()
