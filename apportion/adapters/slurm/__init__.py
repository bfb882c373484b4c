"""Enacting apportion on Slurm: a controller that, every round, reads the cluster (`sinfo`,
`squeue`), solves a policy and Gavel's round mechanism on it, and enacts the round with
`scontrol` (types through node features, releases, requeues), failing safe.

Modules: `slurmcli` (Slurm's commands and their JSON), `mapping` (job → throughput row),
`ledger` (time received per job and type, the adapter's state file), `snapshot` (Slurm's view →
snapshots), `planner` (in process or over HTTP), `plan` (round → `scontrol` commands),
`controller` (the loop), `cli` (`apportion-slurm`).
"""
