"""Enacting apportion on Ray: the shared controller (`adapters.framework`) with Ray's I/O.
Ray core has no queue, priorities or fair share for GPU jobs; the adapter keeps the queue
(SQLite), and every round starts the jobs the policy and Gavel's round mechanism choose as
placement groups pinned to a GPU type and nodes, preempts by removing them, and reads back what
Ray holds before the next round.

Modules: `queue` (the job queue), `runner` (the actor that holds a job's group and runs its
entrypoint), `raycluster` (Ray's calls), `scope` (a queue, some nodes), `managed` (Ray's view
→ the jobs and GPUs a round schedules), `integration` (the framework's interface on Ray),
`inflight` (a round's Ray calls made at once), `controller` (the shared controller, each round
ending once Ray has answered them), `cli` (`apportion-ray`), `local` (a small real Ray cluster
on this host) and `tryout` (a round or three on it). Operator's guide: docs/RAY.md.
"""
