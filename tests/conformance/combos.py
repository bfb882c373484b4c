"""Every backend × every sub-solver available on this machine, for the conformance runners."""

from __future__ import annotations

from apportion.solver.backends import AUTO, Feature, backend_names, get_backend

# First-order methods whose "optimal" is not certified: HiGHS's PDLP may answer "Unknown" (our
# FEASIBLE) at the optimum within 1e-6, and its duals are then not to be trusted.
FIRST_ORDER = {("highs", "pdlp")}
# First-order splitting methods behind cvxpy (ADMM, operator splitting): certified on the
# well-scaled cases, not where throughputs or weights span 1e6 (`Case.ill_conditioned`).
SPLITTING = {("cvxpy", "OSQP"), ("cvxpy", "SCS")}


def backend_solvers(needs: Feature | None = None) -> list[tuple[str, str | None]]:
    """(backend, solver) pairs able to do `needs`; ("auto", None) leads the list."""
    pairs: list[tuple[str, str | None]] = [(AUTO, None)]
    for name in backend_names():
        if name == AUTO:
            continue
        backend = get_backend(name)
        for solver in backend.available_solvers():
            if needs is None or needs in backend.features_for(solver):
                pairs.append((name, solver))
    return pairs


def pair_id(pair: tuple[str, str | None]) -> str:
    backend, solver = pair
    return backend if solver is None else f"{backend}/{solver}"
