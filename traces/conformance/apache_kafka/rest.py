"""The files a Kafka broker leaves at rest, read after a run: each replica's log (decoded by
Kafka's own log dumper, one JVM for every segment of the run), its `leader-epoch-checkpoint`, and
the broker's `replication-offset-checkpoint` (HW), `recovery-point-offset-checkpoint` and
`log-start-offset-checkpoint` (R12: DeleteRecords).

Checkpoint files are Kafka's text format: a version line, a count line, then one entry per line
(`epoch start_offset` for the epoch cache; `topic partition offset` for the offset checkpoints).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from .metadata import MetadataError

_BATCH = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) .*?partitionLeaderEpoch: (-?\d+) ")
_RECORD = re.compile(r"^\| offset: (\d+) .*? payload: (.*)$")


def read_checkpoint(path: Path, columns: int) -> list[list[str]] | None:
    """Entries of a Kafka checkpoint file, or None when it does not exist. A file that breaks the
    format (a torn write) is reported as such: MetadataError."""
    if not path.exists():
        return None
    lines = path.read_text(errors="replace").splitlines()
    if not lines:  # Kafka creates the file empty and reads an empty file as no entries
        return []
    if len(lines) < 2:
        raise MetadataError(f"{path}: truncated checkpoint file")
    try:
        n = int(lines[1])
    except ValueError:
        raise MetadataError(f"{path}: bad entry count {lines[1]!r}") from None
    rows = [ln.split() for ln in lines[2 : 2 + n]]
    if len(rows) != n or any(len(r) != columns for r in rows):
        raise MetadataError(f"{path}: expected {n} entries of {columns} columns")
    return rows


def dump_logs(
    java: str,
    classpath: str,
    files: list[Path],
    main: str = "org.apache.kafka.tools.DumpLogSegments",
) -> dict[Path, list[tuple[int, int, str]]]:
    """(offset, batch leader epoch, value) of every record of each segment file, in file order."""
    if not files:
        return {}
    cmd = [java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"]
    cmd += ["-cp", classpath, main, "--print-data-log"]
    cmd += ["--files", ",".join(str(f) for f in files)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise MetadataError(f"the log dumper failed ({r.returncode}): {r.stderr.strip()[-300:]}")
    out: dict[Path, list[tuple[int, int, str]]] = {}
    cur: list[tuple[int, int, str]] | None = None
    epoch = -1
    for ln in r.stdout.splitlines():
        if ln.startswith("Dumping "):
            cur = out.setdefault(Path(ln[len("Dumping ") :].strip()), [])
            continue
        m = _BATCH.match(ln)
        if m:
            epoch = int(m.group(3))
            continue
        m = _RECORD.match(ln)
        if m and cur is not None:
            cur.append((int(m.group(1)), epoch, m.group(2)))
    return out


def read_at_rest(cluster: Any, topic: str, partitions: int) -> list[dict[str, Any]]:
    """One `at_rest` event per (broker, partition) replica directory that exists."""
    found: list[tuple[int, int, Path]] = []
    for b in cluster.brokers:
        for p in range(partitions):
            d = b.data / f"{topic}-{p}"
            if d.is_dir():
                found.append((b.node_id, p, d))
    segs = [s for _b, _p, d in found for s in sorted(d.glob("*.log"))]
    logs = dump_logs(
        cluster.java, cluster.install.classpath(), segs, cluster.install.dump_log_segments
    )
    by_dir: dict[Path, list[tuple[int, int, str]]] = {}
    for path, recs in logs.items():
        by_dir.setdefault(path.parent.resolve(), []).extend(recs)
    out = []
    for b, p, d in found:
        hw_rows = (
            read_checkpoint(cluster.brokers[b].data / "replication-offset-checkpoint", 3) or []
        )
        rp_rows = (
            read_checkpoint(cluster.brokers[b].data / "recovery-point-offset-checkpoint", 3) or []
        )
        ls_rows = read_checkpoint(cluster.brokers[b].data / "log-start-offset-checkpoint", 3)
        ep_rows = read_checkpoint(d / "leader-epoch-checkpoint", 2)
        recs = sorted(by_dir.get(d.resolve(), []))
        out.append(
            {
                "kind": "at_rest",
                "broker": b,
                "partition": p,
                "log": [[o, e, v] for o, e, v in recs],
                "log_end": (recs[-1][0] + 1) if recs else 0,
                "leader_epoch_checkpoint": None
                if ep_rows is None
                else [[int(e), int(s)] for e, s in ep_rows],
                "hw_checkpoint": _offset(hw_rows, topic, p),
                "recovery_point": _offset(rp_rows, topic, p),
                # R12: the log start offset (DeleteRecords); the segment files may still hold
                # records below it (Kafka deletes a segment only once wholly below it)
                "log_start": _offset(ls_rows or [], topic, p) or 0,
            }
        )
    return out


def _offset(rows: list[list[str]], topic: str, p: int) -> int | None:
    for t, q, o in rows:
        if t == topic and int(q) == p:
            return int(o)
    return None
