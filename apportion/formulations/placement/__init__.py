"""Contention-penalized placement on nodes (DeepShare, FORMULATIONS §7), in pipeline order:

- input: `options`, `instance` (the snapshot in arrays) with `contention` (CS lookups);
- models: the per-candidate ILP (`per_candidate`: the core rows of `model` with the `worst`
  penalty, over `indexed` cells and with the `running` jobs' side, or the `additive` one), the
  pooled relaxation (`pooled/`) and its linear `estimate`;
- search: `start` (greedy placement and estimate), the pooled `rounds`, then `search`, which
  combines them with the per-candidate model's lazy rounds (`answer`, `tuning`);
- output: `evaluate` scores a placement from its definition, `report` and `policy` answer.
"""
