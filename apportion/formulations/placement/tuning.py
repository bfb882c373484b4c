"""HiGHS search settings for this family's MILPs (the estimate, the pooled relaxation and the
per-candidate model)."""

from __future__ import annotations

# RINS and RENS (sub-MIPs around the LP point) spent most of the search time on these models
# without improving the greedy start much more than the other heuristics do; the time goes to
# the tree instead, where the bound, the real difficulty, is closed. Search settings only: they
# do not change what counts as optimal.
HIGHS_OPTIONS: dict[str, bool | int | float | str] = {
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
}
