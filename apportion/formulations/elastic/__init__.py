"""Elastic jobs (FORMULATIONS §9): each job runs in one of its candidate configurations — a GPU
type, a GPU count on a node shape, a batch size — chosen for every job at once under per-type
capacity (a multiple-choice problem, exact as a MILP).

- `goodput` and `fit`: the throughput model and statistical efficiency (Pollux, Sia) behind a
  configuration's goodput, and the model's fit to measured step times;
- `shapes` the node shapes a configuration may take; `candidates` the snapshot's configurations
  (given, or computed from a goodput model) as arrays; `classes` merges identical jobs;
- `model` the multiple-choice MILP and its LP relaxation with time shares; `outcome` the answer;
  `evidence` the reasons behind it;
- leaves: `sia` (power mean of normalized goodput with restart factor), `ones` (GPUs kept busy,
  then the least remaining time × GPUs), `max_min` (max-min of normalized goodput over
  configurations with time sharing), `max_goodput` (the most total normalized goodput).
"""
