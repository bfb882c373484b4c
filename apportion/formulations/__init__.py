"""The policies, one folder per family: `fairness/`, `objectives/`, `deadlines/`, `placement/`.

Each policy module is a leaf that defines `POLICY`; shared math lives in its family's own
modules (and, for the allocation matrix X every LP policy uses, in `allocation.py`). Nothing
here imports a family: `solver.registry` loads the one a request names.
"""
