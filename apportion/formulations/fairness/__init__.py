"""Max-min fairness and its level policies (FORMULATIONS §1, §1a–1c): one share LP, solved once
(max-min) or level by level (water filling, hierarchical), with optional space sharing."""
