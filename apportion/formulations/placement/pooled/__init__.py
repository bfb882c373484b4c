"""The pooled placement model: worst-co-runner penalty, single-node jobs free of contention
(DeepShare's scope). A relaxation of the per-candidate model (`placement.model` +
`placement.worst`) that is usually tight and several times smaller (no copy per candidate, so no
symmetric copies to search); its bound holds for the full problem, and the search uses it to
prove placements it evaluates independently, falling back to the per-candidate model when the
bound stays above them.

Interchangeable candidates are not told apart: the model counts a *family*'s jobs and pieces
(`families`), with the rows every placement meets (`model`) and level counters (`counters`) of
what the family's jobs suffer (`excess`, with `colocation` for candidate co-runners, `slots`
and `met` for the rows that keep the counters honest) and of what running jobs suffer
(`running`). Each
row holds for every real placement (it counts jobs or pieces from below), so the optimum is an
upper bound on the true one. `decode` groups each family's pieces into jobs (`grouping`);
`encode` writes a placement back as a complete MILP start.
"""
