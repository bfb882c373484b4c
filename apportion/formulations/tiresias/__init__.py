"""Tiresias (NSDI'19): discretized 2D-LAS and 2D-Gittins priorities over attained GPU-service,
exact gang admission under them, consolidation only for skewed models, and the placement ILP
of its appendix (FORMULATIONS §10).

Family math: `queues` (queues, promotion, serving order), `gittins_index`, `instance` (the
snapshot as arrays), `placing` (consolidated and hole-filling placement), `greedy` (Tiresias's
own admission), `admission` and `levels` (the exact MILP and its lexicographic levels),
`report`; leaves `two_d_las`, `two_d_gittins`.
"""
