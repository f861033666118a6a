"""Consumer fetches below the HW (mirrors spec/actions/consumer.py's ConsumerFetch). (R5)
Mixed into impl.core.replica.Broker, whose state and helpers it uses."""

from __future__ import annotations

from . import messages as m
from .messages import Effects
from .partition import (
    LEADER,
)


class ConsumeRole:
    # ---- consumers (R5) -----------------------------------------------------------------------
    def _on_consume(self, src: int | str, req: m.ConsumeRequest, now: int) -> Effects:
        out: Effects = []
        self.metrics["consumer_fetches"] += 1
        p = self.partitions.get((req.topic, req.partition))
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
        entries = p.log.read(req.offset, req.max_records, limit=p.log.hw)
        if entries:
            self._trace(
                out,
                "ConsumerFetch",
                {"leader": self.id, "offset": req.offset, "records": [e[1] for e in entries]},
                now,
                p,
            )
        err = m.OFFSET_OUT_OF_RANGE if req.offset > p.log.hw else m.NONE
        resp = m.ConsumeResponse(
            self.id,
            req.correlation_id,
            req.topic,
            req.partition,
            err,
            p.log.hw,
            req.offset,
            entries,
        )
        out.append(m.Send(src, resp))
        return out
