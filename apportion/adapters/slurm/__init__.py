"""Enacting apportion on Slurm: the shared controller (`adapters.framework`) with Slurm's I/O.
Every round it reads the cluster (`sinfo`, `squeue`), and enacts the round the policy and
Gavel's round mechanism compute with `scontrol` (types through node features, releases,
requeues), failing safe.

Modules: `slurmcli` (Slurm's commands and their JSON), `mapping` (job → throughput row),
`scope` (partitions, accounts, a job flag), `managed` (Slurm's view → the jobs and GPUs a round
schedules), `integration` (the framework's interface on Slurm), `cli` (`apportion-slurm`),
`local` (a small real Slurm cluster on this host) and `tryout` (a round or three on it).
Operator's guide: docs/SLURM.md.
"""
