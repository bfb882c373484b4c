"""Outcomes over time: replay a job trace on a cluster under any policy, round by round, lease by
lease, or placement by placement, and measure what the users of a cluster care about (job
completion times, deadlines met, utilization, contention)."""
