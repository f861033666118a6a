"""Consumer fetches below the HW (mirrors spec/actions/consumer.py's ConsumerFetch). (R5)
Mixed into impl.core.replica.Broker, whose state and helpers it uses."""

from __future__ import annotations

from . import messages as m
from .messages import Effects
from .partition import (
    FOLLOWER,
    LEADER,
    Partition,
)


class ConsumeRole:
    # ---- consumers (R5) -----------------------------------------------------------------------
    def _on_consume(self, src: int | str, req: m.ConsumeRequest, now: int) -> Effects:
        out: Effects = []
        self.metrics["consumer_fetches"] += 1
        p = self.partitions.get((req.topic, req.partition))
        if p is not None and p.role == FOLLOWER and self.strat.follower_reads:
            return self._on_consume_follower(out, src, req, p, now)
        if p is None or p.role != LEADER:
            resp = m.ConsumeResponse(
                self.id,
                req.correlation_id,
                req.topic,
                req.partition,
                m.NOT_LEADER,
                0,
                req.offset,
                (),
            )
            out.append(m.Send(src, resp))
            return out
        return self._serve_read(out, src, req, p, now, "leader", p.log.hw, p.log.hw)

    def _serve_read(
        self,
        out: Effects,
        src: int | str,
        req: m.ConsumeRequest,
        p: Partition,
        now: int,
        role: str,
        limit: int,
        end: int,
    ) -> Effects:
        """Read from ``req.offset`` below ``limit``, trace the records served (ConsumerFetch with
        ``role``: this broker as leader or as replica) and answer; a position past ``end`` is
        OFFSET_OUT_OF_RANGE."""
        entries = p.log.read(req.offset, req.max_records, limit=limit)
        if entries:
            self._trace(
                out,
                "ConsumerFetch",
                {role: self.id, "offset": req.offset, "records": [e[1] for e in entries]},
                now,
                p,
            )
        # (R12: below the log start too, DeleteRecords or retention removed it: ``UnifiedLog.
        # read``; the consumer resets, ConsumerResetOffset, impl/core/clients.py)
        out_of_range = req.offset > end or req.offset < p.log.log_start
        err = m.OFFSET_OUT_OF_RANGE if out_of_range else m.NONE
        resp = m.ConsumeResponse(
            self.id, req.correlation_id, req.topic, req.partition, err, p.log.hw, req.offset,
            entries, p.log.log_start,
        )  # fmt: skip
        out.append(m.Send(src, resp))
        return out

    # KIP-392 (kraft): a follower serves the consumer below its own HW, which lags the
    # leader's (it learns it from fetch responses, KAFKA-7104). Kafka: ``ReplicaManager.
    # readFromLog`` with a follower's isolation level (``FetchIsolation.HIGH_WATERMARK``,
    # ``Partition.fetchRecords``); a position past its LEO is OFFSET_OUT_OF_RANGE (the consumer
    # then goes back to the leader). The spec: ConsumerFetch(replica), spec/actions/consumer.py.
    def _on_consume_follower(
        self, out: Effects, src: int | str, req: m.ConsumeRequest, p: Partition, now: int
    ) -> Effects:
        return self._serve_read(
            out, src, req, p, now, "replica", self._follower_read_limit(p), p.log.leo
        )

    def _follower_read_limit(self, p: Partition) -> int:
        """The offset a follower serves the consumer below: its HW (R5). A mutation point
        (impl/mutants.py FollowerReadsToLeo)."""
        return p.log.hw
