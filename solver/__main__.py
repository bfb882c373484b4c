"""`python -m solver` is the `solve` command."""

from solver.cli import run

run()
