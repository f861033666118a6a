"""`isr cluster ...`: run the reference implementation as a real cluster on loopback
(impl/cluster: one process per broker, ZooKeeper from Debian's package)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from isr.spec.protocols import DEFAULT_PROTOCOL

from .errors import OK, VIOLATION, UsageError
from .models import int_in

DEFAULT_DIR = "./.isr-cluster"
# `up`/`restart`: a broker started but did not come up (it exited while recovering, or never
# registered); its log's last line is printed (issue 17). 2 stays bad input.
BROKER_DOWN = 1
EXIT_HELP = (
    "exit codes: 0 up; 1 a broker did not come up (the last line of its broker.log is "
    "printed); 2 bad input or no ZooKeeper"
)


def _cluster(args: argparse.Namespace, must_run: bool = True) -> Any:
    c = open_cluster(args.dir)
    if must_run and not c.running:
        raise UsageError(f"no cluster running in {args.dir} (start one with: isr cluster up)")
    return c


# A cluster runs one process per broker on this machine; more than this is a mistake.
MAX_BROKERS = 16
MAX_PARTITIONS = 256


def check_dir(path: str) -> None:
    """--dir: the cluster's state directory: a directory, or a path where one can be made."""
    from pathlib import Path

    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"--dir {path}: not a directory")
    parent = next((q for q in p.absolute().parents if q.exists()), None)
    if not p.exists() and parent is not None and not parent.is_dir():
        raise UsageError(f"--dir {path}: {parent} is not a directory")


def quiet_kazoo() -> None:
    """kazoo's own warnings off the user's terminal: every short-lived ZooKeeper client these
    commands open and close logs "Connection dropped: socket connection broken" as it closes,
    and a broker's restart makes a few more (issue 30). Errors still show; a broker's own log
    (BROKER_DIR/broker.log) keeps its warnings."""
    import logging

    logging.getLogger("kazoo").setLevel(logging.ERROR)


def open_cluster(path: str) -> Any:
    """The cluster whose state is in ``path`` (--dir), its cluster.json checked: a file left
    half-written or edited by hand is a one-line error, not a traceback in a later command."""
    from isr.impl.cluster.manager import Cluster

    quiet_kazoo()

    check_dir(path)
    try:
        c = Cluster(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"--dir {path}: cannot read cluster.json: {e}") from None
    st = c.state
    ok = isinstance(st, dict) and (
        not st
        or (
            isinstance(st.get("zk"), dict)
            and type(st["zk"].get("port")) is int
            and isinstance(st.get("brokers"), dict)
            and all(isinstance(b, dict) and str(k).isdigit() for k, b in st["brokers"].items())
        )
    )
    if not ok:
        raise UsageError(f"--dir {path}: cluster.json is not a cluster's state (remove it?)")
    return c


def _config(args: argparse.Namespace) -> Any:
    from isr.impl.core.config import PROTOCOLS, Config

    if args.protocol not in PROTOCOLS:
        raise UsageError(f"unknown protocol {args.protocol!r}; choose from {', '.join(PROTOCOLS)}")
    if args.min_insync < 1 or args.min_insync > args.replication:
        raise UsageError("--min-insync must be between 1 and --replication")
    return Config(
        protocol=args.protocol,
        min_insync_replicas=args.min_insync,
        unclean_leader_election=args.unclean,
        replica_lag_time_max_ms=args.lag_time_ms,
        num_replica_fetchers=args.fetchers,
        flush_interval_batches=args.flush_every,
    )


def add_cluster_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--brokers", type=int_in(1, MAX_BROKERS), default=3, help="1..16 (default 3)")
    p.add_argument(
        "--partitions", type=int_in(1, MAX_PARTITIONS), default=1, help="1..256 (default 1)"
    )
    p.add_argument(
        "--replication", type=int_in(1, MAX_BROKERS), default=3, help="at most --brokers"
    )
    p.add_argument(
        "--protocol", default=DEFAULT_PROTOCOL, help="hw-truncation | kip-101 | kip-279 | kip-320"
    )
    p.add_argument("--min-insync", type=int_in(1, MAX_BROKERS), default=2)
    p.add_argument("--unclean", action="store_true", help="allow unclean leader election")
    p.add_argument(
        "--lag-time-ms",
        type=int_in(1, 3_600_000),
        default=10_000,
        help="replica.lag.time.max.ms",
    )
    p.add_argument("--fetchers", type=int_in(1, 16), default=1, help="num.replica.fetchers, 1..16")
    p.add_argument(
        "--flush-every",
        type=int_in(0, 1_000_000),
        default=0,
        help="fsync every N batches (0: never)",
    )


def start(args: argparse.Namespace) -> Any:
    from isr.impl.cluster.manager import BrokerDown, ClusterError
    from isr.impl.cluster.zk import ZooKeeperMissing

    if args.brokers < 1 or args.partitions < 1 or args.replication < 1:
        raise UsageError("--brokers, --partitions and --replication must be >= 1")
    if args.replication > args.brokers:
        raise UsageError(f"--replication {args.replication} exceeds --brokers {args.brokers}")
    cfg = _config(args)
    c = _cluster(args, must_run=False)
    try:
        c.up(args.brokers, args.partitions, args.replication, cfg)
    except ZooKeeperMissing as e:
        raise UsageError(str(e)) from None
    except BrokerDown:
        raise
    except ClusterError as e:
        raise UsageError(str(e)) from None
    except OSError as e:  # the state directory cannot be made or written
        raise UsageError(f"--dir {args.dir}: {e.strerror or e}") from None
    return c


def cmd_up(args: argparse.Namespace) -> int:
    from isr.impl.cluster.manager import BrokerDown

    try:
        c = start(args)
    except BrokerDown as e:
        print(f"isr: cluster up failed: {e}", file=sys.stderr)
        return BROKER_DOWN
    print(f"cluster up in {c.dir}: {args.brokers} brokers, ZooKeeper at {c.zk_hosts}")
    _print_status(c)
    return OK


def cmd_down(args: argparse.Namespace) -> int:
    c = _cluster(args)
    c.down()
    print(f"cluster in {args.dir} stopped")
    return OK


def _broker_arg(c: Any, b: int) -> int:
    if b not in c.broker_ids():
        raise UsageError(f"no broker {b}; brokers are {c.broker_ids()}")
    return b


def cmd_kill(args: argparse.Namespace) -> int:
    from isr.impl.cluster.manager import ClusterError

    c = _cluster(args)
    try:
        c.kill(_broker_arg(c, args.broker), between_steps=not args.anywhere)
    except ClusterError as e:
        raise UsageError(str(e)) from None
    where = "anywhere" if args.anywhere else "between two steps"
    print(f"broker {args.broker} killed (SIGKILL, {where})")
    return OK


def cmd_restart(args: argparse.Namespace) -> int:
    from isr.impl.cluster.manager import BrokerDown, ClusterError

    c = _cluster(args)
    try:
        c.restart(_broker_arg(c, args.broker))
    except BrokerDown as e:
        print(f"isr: restart failed: {e}", file=sys.stderr)
        return BROKER_DOWN
    except ClusterError as e:
        raise UsageError(str(e)) from None
    print(f"broker {args.broker} restarted")
    return OK


def cmd_elect_leader(args: argparse.Namespace) -> int:
    """R9: preferred-replica election, or an operator's election of --broker."""
    from isr.impl.cluster.manager import ClusterError

    c = _cluster(args)
    if args.broker is not None:
        _broker_arg(c, args.broker)
    if args.partition is not None and not 0 <= args.partition < c.state["partitions"]:
        raise UsageError(f"--partition must be in 0..{c.state['partitions'] - 1}")
    try:
        d = c.elect_leader(args.broker, args.partition)
    except ClusterError as e:
        raise UsageError(str(e)) from None
    who = "preferred replicas" if args.broker is None else f"broker {args.broker}"
    leaders = {n: (p["state"] or {}).get("leader") for n, p in d["partitions"].items()}
    print(f"election of {who} done; leaders now {leaders}")
    return OK


def cmd_shutdown(args: argparse.Namespace) -> int:
    """R9: controlled shutdown: leadership moves off the broker, then it stops."""
    from isr.impl.cluster.manager import ClusterError

    c = _cluster(args)
    try:
        left = c.controlled_shutdown(_broker_arg(c, args.broker), stop=not args.keep_running)
    except ClusterError as e:
        raise UsageError(str(e)) from None
    state = "still running" if args.keep_running else "stopped"
    extra = f"; it still led {left} (no other live ISR member)" if left else ""
    print(f"broker {args.broker}: controlled shutdown done, {state}{extra}")
    return OK


def _acks(s: str) -> int:
    table = {"all": -1, "-1": -1, "1": 1, "0": 0}
    if s not in table:
        raise UsageError(f"--acks must be all, 1 or 0 (got {s!r})")
    return table[s]


def cmd_produce(args: argparse.Namespace) -> int:
    from isr.impl.cluster.client import ClusterClient
    from isr.impl.cluster.workload import tps_of

    c = _cluster(args)
    acks = _acks(args.acks)
    if args.count < 1:
        raise UsageError("--count must be >= 1")
    tps = tps_of(c)
    if args.partition is not None:
        if not 0 <= args.partition < len(tps):
            raise UsageError(f"--partition must be in 0..{len(tps) - 1}")
        tps = [tps[args.partition]]

    async def go() -> tuple[int, dict[str, int]]:
        cl = ClusterClient(c.zk_hosts)
        ok, errs = 0, {}
        try:
            await cl.refresh()
            for i in range(args.count):
                tp = tps[i % len(tps)]
                val = args.value if args.value is not None else "x" * args.size
                r = await cl.produce(
                    tp, [(f"{args.prefix}-{i}", val)], acks=acks, retries=20, backoff_s=0.3
                )
                if r.error == "NONE":
                    ok += 1
                else:
                    errs[r.error] = errs.get(r.error, 0) + 1
        finally:
            cl.close()
        return ok, errs

    ok, errs = asyncio.run(go())
    print(f"acknowledged {ok} of {args.count}" + (f"; errors {errs}" if errs else ""))
    return OK if not errs else VIOLATION


def cmd_consume(args: argparse.Namespace) -> int:
    from isr.impl.cluster.client import ClusterClient
    from isr.impl.cluster.workload import tps_of

    c = _cluster(args)

    async def go() -> dict[Any, str]:
        cl = ClusterClient(c.zk_hosts)
        try:
            await cl.refresh()
            return await cl.consume_all(tps_of(c))
        finally:
            cl.close()

    seen = asyncio.run(go())
    if args.print:
        for (tp, off), rid in sorted(seen.items()):
            print(f"{tp[0]}-{tp[1]}\t{off}\t{rid}")
    print(f"consumed {len(seen)} records (below HW) from {len(tps_of(c))} partitions")
    return OK


def _print_status(c: Any, as_json: bool = False) -> None:
    d = c.describe()
    metrics = c.metrics()
    if as_json:
        print(json.dumps({"coordination": d, "brokers": metrics}, indent=1))
        return
    print(f"live brokers: {d['live']}")
    print(
        f"{'partition':<10} {'leader':>6} {'epoch':>5} {'isr':<12} {'replicas':<12} under-replicated"
    )
    under = 0
    for name, p in d["partitions"].items():
        st = p["state"] or {"leader": -1, "leader_epoch": -1, "isr": []}
        ur = len(st["isr"]) < len(p["replicas"])
        under += ur
        print(
            f"{name:<10} {st['leader']:>6} {st['leader_epoch']:>5} {st['isr']!s:<12} "
            f"{p['replicas']!s:<12} {'YES' if ur else 'no'}"
        )
    print(f"under-replicated partitions: {under}")
    # each broker's own view, from the metrics file it rewrites periodically: say how old
    print(f"{'broker':>6} {'partition':<10} {'role':<9} {'HW':>8} {'LEO':>8}  as of")
    for b, s in sorted(metrics.items()):
        age = s.get("age_s")
        when = "" if age is None else f"  {age:.1f} s ago"
        for row in s["partitions"]:
            name = f"{row['topic']}-{row['partition']}"
            print(f"{b:>6} {name:<10} {row['role']:<9} {row['hw']:>8} {row['leo']:>8}{when}")
    for b, s in sorted(metrics.items()):
        mt, rt = s["metrics"], s.get("rates_per_s", {})
        print(
            f"broker {b}{' (controller)' if s.get('controller') else ''}: isr shrinks {mt['isr_shrinks']}, "
            f"expands {mt['isr_expands']}, produce {rt.get('produce_records', 0)}/s, "
            f"fetch {rt.get('fetch_requests', 0)}/s"
        )
    down = [b for b in c.broker_ids() if b not in metrics]
    if down:
        print(f"not running: {down}")


def cmd_status(args: argparse.Namespace) -> int:
    _print_status(_cluster(args), as_json=args.json)
    return OK


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "cluster",
        help="run the reference implementation as a real cluster",
        description="Exit 0: done; 1: `produce` only, some record was not acknowledged; 2: bad "
        "input or a broken environment (no ZooKeeper, no cluster running in --dir).",
    )
    sub = p.add_subparsers(dest="cluster_command", metavar="ACTION", parser_class=type(p))
    p.set_defaults(run=lambda a: (p.print_help(), 2)[1])

    def add(name: str, fn: Any, help_: str) -> argparse.ArgumentParser:
        q = sub.add_parser(name, help=help_, description=p.description)
        q.add_argument("--dir", default=DEFAULT_DIR, help="cluster state directory")
        q.set_defaults(run=fn)
        return q

    up = add("up", cmd_up, "start ZooKeeper and the brokers")
    up.epilog = EXIT_HELP
    add_cluster_options(up)
    add("down", cmd_down, "stop every process of the cluster")
    for name, fn, h in (
        ("kill", cmd_kill, "SIGKILL a broker"),
        ("restart", cmd_restart, "restart a killed broker"),
    ):
        q = add(name, fn, h)
        q.add_argument("broker", type=int_in(0, 2**31 - 1))
        if name == "restart":
            q.epilog = EXIT_HELP
        if name == "kill":
            q.add_argument(
                "--anywhere",
                action="store_true",
                help="SIGKILL at once, possibly inside a step (tests recovery; the run's trace may "
                "then hold a torn step the validator rejects). Default: the broker is first "
                "stopped between two steps, so its trace stays valid",
            )
    el = add(
        "elect-leader",
        cmd_elect_leader,
        "move leadership to each partition's preferred replica, or to --broker (R9)",
    )
    el.add_argument(
        "--broker",
        type=int_in(0, MAX_BROKERS - 1),
        default=None,
        help="default: the preferred replica",
    )
    el.add_argument(
        "--partition",
        type=int_in(0, MAX_PARTITIONS - 1),
        default=None,
        help="default: every partition",
    )
    sd = add(
        "shutdown", cmd_shutdown, "controlled shutdown of a broker: move leadership off it, stop"
    )
    sd.add_argument("broker", type=int_in(0, MAX_BROKERS - 1))
    sd.add_argument(
        "--keep-running",
        action="store_true",
        help="leave the broker running after the controller moved leadership off it",
    )
    pr = add("produce", cmd_produce, "produce records")
    pr.add_argument("--count", type=int_in(1, 10_000_000), default=10)
    pr.add_argument("--acks", default="all")
    pr.add_argument(
        "--size", type=int_in(0, 1_000_000), default=100, help="value size in bytes (<= 1 MB)"
    )
    pr.add_argument("--value", default=None)
    pr.add_argument("--prefix", default="rec")
    pr.add_argument("--partition", type=int_in(0, MAX_PARTITIONS - 1), default=None)
    co = add("consume", cmd_consume, "read every committed record")
    co.add_argument("--print", action="store_true", help="print partition, offset, record id")
    st = add("status", cmd_status, "leaders, ISR, HW, LEO, under-replicated partitions, metrics")
    st.add_argument("--json", action="store_true")
