"""What a run measured: a per-job record table, a time series, and the summary of both.

- JCT = finish − arrival; queueing delay = first start − arrival; makespan = last finish − first
  arrival; run time = the time a job held GPUs (DeepShare's JCT, which leaves queueing out).
- FTF ρ (Themis): JCT ÷ the job's isolated time, the time its steps would take on an equal
  1/n̄ share of every GPU type (whole gangs, at most all of its time), n̄ the time-averaged number
  of active jobs over the job's life (FORMULATIONS §3's isolated share).
- Deadlines: a job meets its SLO when it finishes by one of its deadline options; it earns the
  largest value among the options it meets.
- Utilization: GPU-seconds held ÷ (GPUs × time), per type, over the run and per interval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from apportion.simulator.snapshots import isolated_throughput
from apportion.simulator.state import ACTIVE, DONE, FUTURE, UNSERVABLE, JobStates, active_time
from apportion.solver.arraytypes import FloatArray

#: Terminations of a call stopped by its counted-work limit (iterations; nodes for a MILP).
WORK_LIMITS = ("iteration_limit", "solution_limit")

if TYPE_CHECKING:
    from apportion.simulator.enact.common import CallLog
    from apportion.simulator.series import Series


def _deadlines(table: JobStates) -> tuple[FloatArray, FloatArray]:
    """Deadline option times and values, padded to the most options any job has with options
    no finish can meet (−inf, worth 0)."""
    jobs = table.trace.jobs
    width = max((len(job.deadlines) for job in jobs), default=0)
    times = np.full((len(jobs), max(width, 1)), -np.inf)
    values = np.zeros((len(jobs), max(width, 1)))
    for j, job in enumerate(jobs):
        for o, option in enumerate(job.deadlines):
            times[j, o], values[j, o] = option.time, option.value
    return times, values


def _isolated_time(table: JobStates, jct: FloatArray) -> FloatArray:
    everyone = np.arange(len(table.ids))
    with np.errstate(invalid="ignore", divide="ignore"):
        contenders = np.where(jct > 0, active_time(table) / jct, 1.0)
    iso = isolated_throughput(table, everyone, np.nan_to_num(contenders, nan=1.0))
    isolated: FloatArray = np.divide(
        table.total, iso, out=np.full(everyone.size, np.nan), where=iso > 0
    )
    return isolated


def records(table: JobStates) -> pd.DataFrame:
    """One row per job, in trace order."""
    jobs = table.trace.jobs
    jct = table.finish - table.arrival
    isolated = _isolated_time(table, jct)
    times, values = _deadlines(table)
    slo = np.array([bool(job.deadlines) for job in jobs], dtype=bool)
    met = table.finish[:, None] <= times + 1e-6  # NaN finish (unfinished) compares False
    frame = pd.DataFrame(
        {
            "job": table.ids,
            "arrival": table.arrival,
            "scale_factor": table.scale,
            "workload_class": [job.workload_class for job in jobs],
            "job_class": [job.job_class for job in jobs],
            "entity": [job.entity for job in jobs],
            "total_steps": table.total,
            "steps_done": table.total - table.remaining,
            "steps_remaining": table.remaining,
            "finished": table.state == DONE,
            "first_start": table.first_start,
            "finish": table.finish,
            "jct": jct,
            "queueing_delay": table.first_start - table.arrival,
            "run_seconds": table.run_seconds,
            "gpu_seconds": table.gpu_seconds,
            "lost_seconds": table.lost_seconds,
            "moves": table.moves,
            "isolated_time": isolated,
            "ftf_rho": jct / isolated,
            "deadline": np.where(slo, times[:, 0], np.nan),
            "deadline_met": pd.array(np.where(slo, met.any(axis=1), False), dtype="boolean"),
            "value_earned": np.where(slo, np.where(met, values, 0.0).max(axis=1), np.nan),
            "value_possible": np.where(slo, values.max(axis=1), np.nan),
            "guaranteed": table.guaranteed,
            "guarantee_broken": table.broken,
            "reason": [table.reasons.get(j) for j in range(len(jobs))],
        }
    )
    frame.loc[~slo, "deadline_met"] = pd.NA
    for k, name in enumerate(table.types):
        frame[f"received_{name}"] = table.received[:, k]
    return frame


def timeseries(series: Series, table: JobStates) -> pd.DataFrame:
    """One row per interval: who ran, how much of each GPU type was held, steps done."""
    start = np.asarray(series.start, dtype=float)
    end = np.asarray(series.end, dtype=float)
    length = end - start
    busy = np.asarray(series.busy, dtype=float).reshape(len(start), len(table.types))
    frame = pd.DataFrame(
        {
            "start": start,
            "end": end,
            "running": series.running,
            "active": series.active,
            "finished": series.finished,
            "steps": series.steps,
        }
    )
    frame["waiting"] = frame["active"] - frame["running"]
    for k, name in enumerate(table.types):
        frame[f"busy_{name}"] = busy[:, k]
        with np.errstate(invalid="ignore", divide="ignore"):
            frame[f"util_{name}"] = np.where(
                length > 0, busy[:, k] / (table.capacity[k] * length), 0.0
            )
    return frame


def job_series(series: Series, table: JobStates) -> pd.DataFrame:
    """One row per running job per interval (`SimConfig.job_series`): the steps it made, on
    which GPU type and how many GPUs it held (0 for a space-sharing pair's second member)."""
    columns = ("start", "end", "job", "gpu_type", "gpus", "steps")
    if not series.jobs:
        return pd.DataFrame({name: [] for name in columns})
    counts = [len(jobs) for jobs, _, _, _ in series.jobs]
    jobs, kinds, gpus, steps = (np.concatenate(part) for part in zip(*series.jobs, strict=True))
    return pd.DataFrame(
        {
            "start": np.repeat(series.start, counts),
            "end": np.repeat(series.end, counts),
            "job": np.asarray(table.ids, dtype=object)[jobs],
            "gpu_type": np.asarray(table.types, dtype=object)[kinds],
            "gpus": gpus,
            "steps": steps,
        }
    )


def calls_frame(calls: CallLog) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "time": calls.time,
            "seconds": calls.seconds,
            "solver_seconds": calls.solver_seconds,
            "cpu_seconds": calls.cpu_seconds,
            "jobs": calls.jobs,
            "status": calls.status,
            "termination": calls.termination,
        }
    )


def _quantiles(values: pd.Series[Any], prefix: str) -> dict[str, float | None]:
    clean = values.dropna().to_numpy(dtype=float)
    if not clean.size:
        return {f"{prefix}_{n}": None for n in ("mean", "median", "p95", "p99")}
    median, p95, p99 = (float(q) for q in np.percentile(clean, [50, 95, 99]))
    return {
        f"{prefix}_mean": float(clean.mean()),
        f"{prefix}_median": median,
        f"{prefix}_p95": p95,
        f"{prefix}_p99": p99,
    }


def summarize(
    table: JobStates, jobs: pd.DataFrame, series: pd.DataFrame, calls: pd.DataFrame
) -> dict[str, Any]:
    """The run in one row: JCT quantiles, makespan, utilization, deadlines, FTF, calls."""
    done = jobs[jobs["finished"]]
    first = float(jobs["arrival"].min()) if len(jobs) else 0.0
    last = float(series["end"].max()) if len(series) else first
    if len(done) and not ((table.state == ACTIVE) | (table.state == FUTURE)).any():
        last = float(done["finish"].max())  # not the end of the round the last job ended in
    out: dict[str, Any] = {
        "jobs": len(jobs),
        "finished": len(done),
        "unfinished": int((~jobs["finished"]).sum()),
        "never_started": int(jobs["first_start"].isna().sum()),
        "fits_nowhere": int((table.state == UNSERVABLE).sum()),
        **_quantiles(done["jct"], "jct"),
        # DeepShare's JCT: the time a job held GPUs, its queueing left out.
        **_quantiles(done["run_seconds"], "run_time"),
        "makespan": float(done["finish"].max() - first) if len(done) else None,
        "simulated_seconds": last - first,
        **_quantiles(jobs["queueing_delay"], "queueing_delay"),
        "ftf_rho_mean": _mean(done["ftf_rho"]),
        "ftf_rho_max": float(done["ftf_rho"].max()) if len(done) else None,
        "moves": int(jobs["moves"].sum()),
        "lost_seconds": float(jobs["lost_seconds"].sum()),
        "policy_calls": len(calls),
        "calls_at_time_limit": int((calls["termination"] == "time_limit").sum()),
        "calls_at_work_limit": int(calls["termination"].isin(WORK_LIMITS).sum()),
        "policy_seconds": float(calls["seconds"].sum()),
        "solver_seconds": float(calls["solver_seconds"].sum()),
        "policy_cpu_seconds": float(calls["cpu_seconds"].sum()),
    }
    span = last - first
    total_used = 0.0
    for k, name in enumerate(table.types):
        gpu_time = table.capacity[k] * span
        used = float(series[f"busy_{name}"].sum()) if len(series) else 0.0
        total_used += used
        out[f"utilization_{name}"] = float(used / gpu_time) if gpu_time > 0 else 0.0
    capacity = float(table.capacity.sum()) * span
    out["utilization"] = total_used / capacity if capacity > 0 else 0.0
    out.update(_deadline_summary(jobs))
    return out


def _deadline_summary(jobs: pd.DataFrame) -> dict[str, Any]:
    slo = jobs[jobs["deadline"].notna()]
    best_effort = jobs[jobs["deadline"].isna() & jobs["finished"]]
    if not len(slo):
        return {"slo_jobs": 0}
    first_met = slo["finish"] <= slo["deadline"] + 1e-6  # an unfinished job's NaN: False
    return {
        "slo_jobs": len(slo),
        "deadline_met_fraction": float(slo["deadline_met"].astype(bool).mean()),
        # Chronus's schedule_summary: 1 − miss_ddl, the value of the first (earliest) option
        # met over the job's best, averaged over SLO jobs; and the share meeting their first.
        "satisfaction": float((slo["value_earned"] / slo["value_possible"]).mean()),
        "first_deadline_met_fraction": float(first_met.mean()),
        "value_earned": float(slo["value_earned"].sum()),
        "value_possible": float(slo["value_possible"].sum()),
        "best_effort_jct_mean": _mean(best_effort["jct"]),
        # Deadline admission's promises: withdrawn by a later answer, or kept to the end by the
        # policy and still missed in the replay (both 0 for a policy that keeps its word).
        "guarantees_broken": int(slo["guarantee_broken"].sum()),
        "guaranteed_missed": int((slo["guaranteed"] & ~slo["deadline_met"].astype(bool)).sum()),
    }


def _mean(values: pd.Series[Any]) -> float | None:
    clean = values.dropna()
    return float(clean.mean()) if len(clean) else None
