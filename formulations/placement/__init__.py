"""Contention-penalized placement on nodes (DeepShare, FORMULATIONS §7): the instance, the
per-candidate ILP with its penalties, the pooled relaxation, greedy and estimated starts, the
search that combines them, and the report."""
