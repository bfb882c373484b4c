"""Policies with one objective over the allocation X (FORMULATIONS §2–§5): makespan, finish-time
fairness, throughput, throughput per dollar, min cost with SLOs (the demand engine), and FIFO."""
