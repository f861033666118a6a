"""Coordination sessions (R7, R8, R9, R18; --session-expiries N only).

A broker is live, to the controller, while it holds a coordination session: its ephemeral
/brokers/ids/[id] node (R18). The session may expire while the process runs on: a long GC pause,
or lost contact with the coordination service. The controller then reacts exactly as to a crash
(R9): a leader whose session expired is lost (it elects another, or leaves the partition
offline), a follower is removed from the ISR, and neither is sent LeaderAndIsr requests. The
broker itself notices nothing until it next talks to the service: it keeps its memory and beliefs
and acts on them (R8, a zombie): a deposed leader still presumes to lead, takes writes, serves
fetches and tries ISR writes. Those are fenced as Kafka fences them: its cached zkVersion is stale
after the controller's first write (R7, R18: the compare-and-set fails), and followers and
consumers at a newer leader epoch stop talking to it (KIP-320; before KIP-320 nothing stops a
follower still at the old epoch).

When it next reaches the service it registers a new session (BrokerRenewSession): the controller
sends it the current partition state (a LeaderAndIsr, as to a restarted broker). If the
partition still records it as leader (the controller could not replace it: no other live ISR
member, or the epoch bound), that leadership belongs to its previous incarnation and the
controller must elect again, possibly the same broker with a new epoch (``Faults.lead_renewed``;
Kafka's onBrokerStartup for an offline partition, and KIP-380's broker epochs for a broker that
re-registers before the controller noticed).

Modelling choices. The zombie's ISR writes are allowed while its session is expired: with a
current zkVersion the write would have landed just before the expiry (the expiry changes nothing
that the write reads, so the two steps commute), and with a stale one it fails either way. A crash
ends the session too: it clears the expired bit (a dead broker is not live either way, and its
restart registers anew, BrokerRestart). Requests already in flight to the broker stay deliverable
(they carry epochs the broker checks, R9), in order, until the controller, handling the expiry,
drops the broker's queue (NetworkLoseLeaderAndIsr, R8). Not modelled: the controller's own session (that is
--controller-failovers), the session of a broker whose expiry the controller misses (before
KIP-380 a quick re-registration could go unnoticed).
"""

from __future__ import annotations

from ..state import Request, State


def coordination_expire_session(ctx, s: State, kind: int, out: list) -> None:
    """CoordinationExpireSession(replica): a live broker's session expires while its process
    runs on (R7, R8, R18); bounded by Config.session_expiries."""
    f = s.faults
    if f.expiries >= ctx.config.session_expiries:
        return
    for i, r in enumerate(s.replicas):
        if r.alive and not f.expired >> i & 1:
            faults = f._replace(expired=f.expired | 1 << i, expiries=f.expiries + 1)
            out.append(
                ((kind, (i,)), State(s.replicas, s.coord, s.requests, s.history, faults, s.kraft))
            )


def broker_renew_session(ctx, s: State, kind: int, out: list) -> None:
    """BrokerRenewSession(replica): a running broker whose session expired registers a new one
    (R9, R18). The controller sends it the current partition state, unless the partition still
    records it as leader: that leadership is of its old incarnation, lost until the controller
    elects again (``Faults.lead_renewed``). Its memory and beliefs are untouched."""
    f = s.faults
    if not f.expired:
        return
    c = s.coord
    for i, r in enumerate(s.replicas):
        if not (r.alive and f.expired >> i & 1):
            continue
        expired = f.expired & ~(1 << i)
        reqs = s.requests
        if c.leader == i:
            faults = f._replace(expired=expired, lead_renewed=True)
        else:
            faults = f._replace(expired=expired)
            req = Request(i, c.leader, c.epoch, c.isr, True, f.ctrl_epoch)
            if req not in reqs:
                reqs = tuple(sorted((*reqs, req)))
        out.append(((kind, (i,)), State(s.replicas, c, reqs, s.history, faults, s.kraft)))
