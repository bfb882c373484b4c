"""How an allocation is enacted: which jobs run in the next round, on which nodes and GPUs."""
