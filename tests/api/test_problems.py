"""What a problem echoes of a long message: whole words, and a mark that it was cut."""

from __future__ import annotations

from apportion.api.problems import ECHO_CHARACTERS, shorten


def test_a_long_message_is_cut_between_words() -> None:
    names = [f"policy_{i:02d}_with_a_long_name" for i in range(20)]
    text = "unknown policy 'x'; choose one of " + ", ".join(names)
    short = shorten(text)
    assert short.endswith(" …") and len(short) <= ECHO_CHARACTERS + 2
    kept = short.removesuffix(" …").split()
    words = text.split()[: len(kept)]
    assert kept[:-1] == words[:-1]
    assert kept[-1] == words[-1].rstrip(",") in names  # the last name echoed is a whole one


def test_a_short_message_is_echoed_whole() -> None:
    assert shorten("snapshot.jobs.0.weight: must be > 0") == "snapshot.jobs.0.weight: must be > 0"
