"""Follower fetcher pool (R10, R12).

A partition is fetched by fetcher ``hash(topic, partition) mod num.replica.fetchers`` of the pool
for its leader broker. A fetcher has one fetch in flight at a time (a batched request for all its
partitions); a partition that hit an error backs off replica.fetch.backoff.ms before it is
included again. Fetchers with no partitions are idle and dropped. The hash is CRC32 so the
assignment is the same in every process (Python's ``hash`` of a str is salted per process).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from .messages import TP


def fetcher_id(tp: TP, num_fetchers: int) -> int:
    return zlib.crc32(f"{tp[0]}-{tp[1]}".encode()) % num_fetchers


@dataclass
class Fetcher:
    leader: int
    fid: int
    partitions: set[TP] = field(default_factory=set)
    in_flight: int | None = None  # correlation id of the outstanding request
    carried: frozenset[TP] = frozenset()  # the partitions the outstanding request carries
    # kraft: diverging answers taken, their truncation not yet done (the fetcher's next step;
    # KAFKA-14704): tp -> (leader epoch of the fetch, fetch offset, (epoch, end offset)). The
    # fetcher sends nothing until it is done.
    pending: dict[TP, tuple[int, int, tuple[int, int]]] = field(default_factory=dict)
    backoff_until: dict[TP, int] = field(default_factory=dict)  # tp -> time (ms)

    @property
    def key(self) -> str:
        return f"fetch:{self.leader}:{self.fid}"


class FetcherPool:
    def __init__(self, num_fetchers: int, keep_in_flight: bool = False) -> None:
        self.num = num_fetchers
        # kraft: a fetcher whose last partition left keeps its fetch in flight until answered,
        # so a partition back to that leader waits for it (one fetch in flight per follower and
        # leader, as the spec's fetcher)
        self.keep_in_flight = keep_in_flight
        self.fetchers: dict[tuple[int, int], Fetcher] = {}

    def add(self, tp: TP, leader: int) -> Fetcher:
        self.remove(tp)
        fid = fetcher_id(tp, self.num)
        f = self.fetchers.setdefault((leader, fid), Fetcher(leader, fid))
        f.partitions.add(tp)
        return f

    def remove(self, tp: TP) -> None:
        for key, f in list(self.fetchers.items()):
            if tp in f.partitions:
                f.partitions.discard(tp)
                f.backoff_until.pop(tp, None)
                busy = f.in_flight is not None or f.pending
                if not f.partitions and not (self.keep_in_flight and busy):
                    del self.fetchers[key]

    def get(self, leader: int, fid: int) -> Fetcher | None:
        return self.fetchers.get((leader, fid))

    def fetcher_of(self, tp: TP) -> Fetcher | None:
        for f in self.fetchers.values():
            if tp in f.partitions:
                return f
        return None

    def carrying(self, tp: TP) -> bool:
        """A fetch carrying ``tp`` is outstanding, or its diverging answer's truncation is to
        come, in any fetcher (one whose partitions left keeps its fetch until answered)."""
        return any(
            (f.in_flight is not None and tp in f.carried) or tp in f.pending
            for f in self.fetchers.values()
        )

    def backoff(self, tp: TP, until_ms: int) -> None:
        f = self.fetcher_of(tp)
        if f is not None:
            f.backoff_until[tp] = until_ms

    def ready(self, f: Fetcher, now: int) -> list[TP]:
        return sorted(tp for tp in f.partitions if f.backoff_until.get(tp, 0) <= now)
