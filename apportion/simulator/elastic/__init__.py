"""Elastic jobs in simulation (Sia's simulator model): `truth` (step times from the measured
profiles), `jobs` (a job's true progress and its scheduler's goodput model), `belief` (the
configurations Sia offers each job), `engine` (the round loop), `policies` (apportion's elastic
policies as deciders) and `ones` (ONES's evolutionary search). Rigid jobs of the same workloads
run in the round-based simulator (`simulator.traces.sia`)."""
