"""Resident memory of the visited set at 10**7 and 10**8 states, without the model.

    python bench/fpset_memory.py [--counts 10000000,100000000]

Inserts that many distinct 64-bit fingerprints (a splitmix64 sequence: uniform, as the model's
are) into :class:`checker.fpset.FingerprintSet`, each count in a fresh subprocess, and reports the
process's peak resident set (VmHWM, which includes the moment the table doubles and the old and
new tables coexist), its resident set before the inserts (the interpreter), and bytes per state
both ways. What a disk-store run adds to this is bounded: a chunk of the queue and the trace
buffers (docs/store.md); the figures of whole runs are bench/store_memory.py's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
from isr.checker.fpset import FingerprintSet

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0

n = int(sys.argv[1])
before = status("VmRSS:")
fs = FingerprintSet()
add = fs.add
mask = (1 << 64) - 1
x = 0x9E3779B97F4A7C15
t = time.perf_counter()
for _ in range(n):
    x = (x + 0x9E3779B97F4A7C15) & mask
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    add((z - (1 << 63)) or 1)
seconds = time.perf_counter() - t
peak = status("VmHWM:")
print(json.dumps({
    "states": len(fs),
    "table_bytes": fs.nbytes,
    "rss_before_mib": round(before / 2**20, 1),
    "peak_rss_mib": round(peak / 2**20, 1),
    "bytes_per_state_peak": round(peak / len(fs), 2),
    "bytes_per_state_table": round(fs.nbytes / len(fs), 2),
    "seconds": round(seconds, 1),
}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", default="10000000,100000000")
    args = ap.parse_args(argv)
    for n in (int(c) for c in args.counts.split(",")):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(n), str(ROOT)], capture_output=True, text=True
        )
        if out.returncode != 0:
            raise SystemExit(out.stderr[-2000:])
        r = json.loads(out.stdout)
        print(
            f"{r['states']:>12,} states: table {r['table_bytes'] / 2**20:,.0f} MiB "
            f"({r['bytes_per_state_table']:.1f} B/state), peak RSS {r['peak_rss_mib']:,.0f} MiB "
            f"({r['bytes_per_state_peak']:.1f} B/state, interpreter {r['rss_before_mib']:.0f} "
            f"MiB), {r['seconds']:.0f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
