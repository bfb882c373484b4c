"""Whose hold is it: the adapter's holds told from its users' (and admins').

A job the adapter does not run in a round is held so that the scheduler does not start it
behind the round's back; a job may also be held by its user (`scontrol uhold`), or an admin,
and that hold is not the adapter's to release. The scheduler does not always say who held a
job (Slurm shows `JobHeldUser` for a user's `uhold`, for a hold at submission and for the
adapter's own `requeuehold` alike), so the adapter keeps a book of its holds in its ledger
(`Ledger.holds`, job → the scheduler's word for the hold, "" until seen) and of the jobs it
has seen (`Ledger.known`):

- a waiting job in the book, held with the word recorded (or any, while "" is), is the
  adapter's; held with another word, someone held it on top (`JobHeldAdmin` → `JobHeldUser`);
- a held waiting job the adapter had never seen is held at submission, for the adapter to
  start: it joins the book;
- any other held job (one the adapter had seen unheld, or running: the adapter never holds
  a running job) is held by someone else, and stays so until they release it.

Holds the adapter is about to place are entered in the book before their commands run, and
releases leave it only after theirs succeeded, so a crash in between never turns one of its
own holds into a user's (which would hold the job forever); an entry for a job seen unheld
is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from apportion.adapters.framework.actions import HOLDS, Action, Kind
from apportion.adapters.framework.ledger import Ledger
from apportion.adapters.framework.view import Job, View


def sort_holds(jobs: Iterable[Job[Any]], ledger: Ledger) -> tuple[dict[str, str], dict[str, str]]:
    """(jobs held by someone else: job → why, the adapter's book after this reading)."""
    jobs = list(jobs)
    others: dict[str, str] = {}
    mine: dict[str, str] = {}
    for job in jobs:
        word = job.held_by
        if word is None:
            continue  # not held: its entry, if any, is dropped
        recorded = ledger.holds.get(job.id)
        if job.running:
            others[job.id] = f"held ({word}) while it ran, by its user or an admin"
        elif recorded in ("", word) or (recorded is None and job.id not in ledger.known):
            mine[job.id] = word
        else:
            others[job.id] = f"held by its user or an admin ({word}), not by the adapter"
    managed = {job.id for job in jobs}
    # Jobs not managed now (a requeued job still completing) keep their entry.
    mine.update({j: word for j, word in ledger.holds.items() if j not in managed})
    return others, mine


def held_after(view: View[Any], actions: Iterable[Action]) -> set[str]:
    """Jobs the round's commands leave held by the adapter (for a while, for a move); not
    those someone else holds (a stopped job they hold stays theirs)."""
    kinds = HOLDS | {Kind.MOVE}
    return {a.job for a in actions if a.kind in kinds and a.commands} - set(view.held)


def placing(book: Mapping[str, str], jobs: Iterable[str]) -> dict[str, str]:
    """The book with the holds about to be placed on `jobs` (their word not seen yet)."""
    return {**book, **{j: book.get(j, "") for j in jobs}}


def releasing(book: Mapping[str, str], jobs: Iterable[str]) -> dict[str, str]:
    """The book without the jobs whose release went through."""
    gone = set(jobs)
    return {j: word for j, word in book.items() if j not in gone}
