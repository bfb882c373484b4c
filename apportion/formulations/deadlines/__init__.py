"""Deadline admission over leases (Chronus, FORMULATIONS §6): the lease problem, greedy and MILP
plans, the search within a time budget, round-up packing onto nodes, and the report."""
