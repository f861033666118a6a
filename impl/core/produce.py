"""Produce requests: acks, min.insync.replicas, delayed produce, idempotent retries (mirrors
spec/actions/producer.py's ProducerSend). (R6, R15)
Mixed into impl.core.replica.Broker, whose state and helpers it uses."""

from __future__ import annotations

from . import messages as m
from .messages import TP, Effects
from .partition import (
    LEADER,
    DelayedProduce,
    Partition,
)
from .producer_state import APPEND, DUPLICATE, OUT_OF_ORDER


class ProduceRole:
    # ---- produce (R6) -------------------------------------------------------------------------
    def _on_produce(self, src: int | str, req: m.ProduceRequest, now: int) -> Effects:
        out: Effects = []
        self.metrics["produce_requests"] += 1
        p = self.partitions.get((req.topic, req.partition))
        client = str(src)

        def reply(err: str, base: int = -1) -> None:
            if req.acks != 0:
                out.append(
                    m.Send(
                        src,
                        m.ProduceResponse(
                            self.id, req.correlation_id, req.topic, req.partition, err, base
                        ),
                    )
                )

        if p is None or p.role != LEADER:
            reply(m.NOT_LEADER)
            return out
        rids = [rid for rid, _v in req.records]
        # the batch header of an idempotent producer's batch (FORMAT.md: the validator checks
        # it against the spec's --idempotence producer)
        head = (
            {
                "producer_id": req.producer_id,
                "producer_epoch": req.producer_epoch,
                "base_sequence": req.base_sequence,
            }
            if req.producer_id >= 0
            else {}
        )
        if req.acks == -1 and len(p.isr) < self.config.min_insync_replicas:
            self._trace(
                out,
                "ProducerSend",
                {"leader": self.id, "records": rids, "acks": "all", **head,
                 "error": m.NOT_ENOUGH_REPLICAS},
                now,
                p,
            )  # fmt: skip
            reply(m.NOT_ENOUGH_REPLICAS)
            return out
        if req.producer_id >= 0:
            verdict, dup = self._analyze(p, req)
            if verdict == DUPLICATE:
                # traced: the spec's producer takes the original's offset as its answer (a
                # validator mapping without --idempotence skips it: VALIDATION.md, decision 7)
                acks = {0: "0", 1: "1", -1: "all"}.get(req.acks, str(req.acks))
                self._trace(
                    out,
                    "ProducerSend",
                    {"leader": self.id, "records": rids, "acks": acks, **head,
                     "duplicate": True, "base_offset": dup},
                    now,
                    p,
                )  # fmt: skip
                return out + self._answer_duplicate(p, req, client, dup, now)
            if verdict != APPEND:  # OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH
                acks = {0: "0", 1: "1", -1: "all"}.get(req.acks, str(req.acks))
                self._trace(
                    out,
                    "ProducerSend",
                    {"leader": self.id, "records": rids, "acks": acks, **head, "error": verdict},
                    now,
                    p,
                )
                reply(verdict)
                return out
            entries: tuple[m.Entry, ...] = tuple(
                (p.leader_epoch, rid, v, req.producer_id, req.base_sequence + k,
                 req.producer_epoch)
                for k, (rid, v) in enumerate(req.records)
            )  # fmt: skip
        else:
            entries = tuple((p.leader_epoch, rid, v) for rid, v in req.records)
        base = self._append(out, p, entries)
        self.metrics["produce_records"] += len(entries)
        raised = self._raise_hw(p, now)
        acks = {0: "0", 1: "1", -1: "all"}.get(req.acks, str(req.acks))
        self._trace(
            out,
            "ProducerSend",
            {"leader": self.id, "records": rids, "acks": acks, **head, "base_offset": base},
            now,
            p,
        )
        if raised:
            self._complete_delayed(out, p, now)
        if req.acks == 1:
            self._acked(out, p, rids, base, "1", m.NONE, now)
            reply(m.NONE, base)
        elif req.acks == -1:
            d = DelayedProduce(
                client, req.correlation_id, base, base + len(entries), rids=tuple(rids)
            )
            if p.log.hw >= d.required:
                out.append(self._produce_reply(p, d, self._after_append_error(p), now=now, out=out))
            else:
                p.delayed.append(d)
                key = f"produce:{req.topic}:{req.partition}:{client}:{req.correlation_id}"
                out.append(m.SetTimer(key, self.config.request_timeout_ms))
        self._wake_parked(out, p.tp, now)
        return out

    def _analyze(self, p: Partition, req: m.ProduceRequest) -> tuple[str, int]:
        """The leader's producer state's answer to this batch (impl/core/producer_state.py,
        Kafka's ``UnifiedLog.analyzeAndValidateProducerState``; the spec's
        ``producer_state.analyze``): DUPLICATE with the original's offset (a retry of a batch
        whose answer was lost: answered as a success), APPEND, OUT_OF_ORDER_SEQUENCE_NUMBER or
        INVALID_PRODUCER_EPOCH (not appended). A batch of several records is a duplicate when
        every record is among the producer's last five batches at consecutive offsets."""
        st = p.log.producers
        verdict, base = st.analyze(req.producer_id, req.producer_epoch, req.base_sequence)
        if verdict == DUPLICATE:
            for k in range(1, len(req.records)):
                v, o = st.analyze(req.producer_id, req.producer_epoch, req.base_sequence + k)
                if v != DUPLICATE or o != base + k:
                    return OUT_OF_ORDER, -1
        return verdict, base

    def _answer_duplicate(
        self, p: Partition, req: m.ProduceRequest, client: str, base: int, now: int
    ) -> Effects:
        """A dropped duplicate appends nothing (the spec's ``Config.idempotence``: the leader
        drops a retry of a batch it holds; its ``ProduceAcked`` is the original's, which the
        spec made when the HW passed it). It is answered like the original: at once if
        committed, else when the HW passes it (acks=all) or the request times out."""
        self.metrics["produce_duplicates"] += 1
        end = base + len(req.records)
        if req.acks != -1 or p.log.hw >= end:
            if req.acks == 0:
                return []
            resp = m.ProduceResponse(self.id, req.correlation_id, p.tp[0], p.tp[1], m.NONE, base)
            return [m.Send(client, resp)]
        p.delayed.append(DelayedProduce(client, req.correlation_id, base, end, duplicate=True))
        key = f"produce:{req.topic}:{req.partition}:{client}:{req.correlation_id}"
        return [m.SetTimer(key, self.config.request_timeout_ms)]

    def _after_append_error(self, p: Partition) -> str:
        if len(p.isr) < self.config.min_insync_replicas:
            return m.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return m.NONE

    def _complete_delayed(self, out: Effects, p: Partition, now: int) -> None:
        done = [d for d in p.delayed if p.log.hw >= d.required]
        for d in done:
            p.delayed.remove(d)
            out.append(self._produce_reply(p, d, self._after_append_error(p), now=now, out=out))

    def _fail_delayed(self, out: Effects, p: Partition, err: str) -> None:
        for d in p.delayed:
            out.append(self._produce_reply(p, d, err))
        p.delayed = []

    def _produce_reply(
        self,
        p: Partition,
        d: DelayedProduce,
        err: str,
        *,
        now: int = -1,
        out: Effects | None = None,
    ) -> m.Send:
        if err == m.NONE and out is not None and not d.duplicate:
            # (the ids kept with the request: DeleteRecords may have removed the records since)
            rids = list(d.rids) or [p.log.entry(o)[1] for o in range(d.base_offset, d.required)]
            self._acked(out, p, rids, d.base_offset, "all", err, now)
        resp = m.ProduceResponse(self.id, d.correlation_id, p.tp[0], p.tp[1], err, d.base_offset)
        return m.Send(d.client, resp)

    def _acked(
        self, out: Effects, p: Partition, rids: list[str], base: int, acks: str, err: str, now: int
    ) -> None:
        """History for the trace: which records were acknowledged, at which offsets."""
        self._trace(
            out,
            "ProduceAcked",
            {"leader": self.id, "records": rids, "base_offset": base, "acks": acks},
            now,
            p,
        )

    def _wake_parked(self, out: Effects, tp: TP, now: int) -> None:
        for key, req in list(self._parked.items()):
            if any((fp.topic, fp.partition) == tp for fp in req.partitions):
                del self._parked[key]
                out += self._on_fetch(req, now, first=False, park=False)
