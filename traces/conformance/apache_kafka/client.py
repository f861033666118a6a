"""The Python side of KafkaDriver.java: one JVM running Kafka's own clients, one JSON object per
line each way, a deadline per request (a hung driver is an error, never a hang)."""

from __future__ import annotations

import contextlib
import json
import select
import subprocess
import time
from pathlib import Path
from typing import Any

from .cluster import JVM_FLAGS, _die_with_parent
from .install import KafkaInstall, KafkaSetupError, java_bin


class DriverError(Exception):
    """The driver answered ``ok: false`` (a client-side error: the op failed, not the kit)."""


class Driver:
    def __init__(self, install: KafkaInstall, bootstrap: str, workdir: Path) -> None:
        log4j = workdir / "log4j2.yaml"
        self.stderr_path = workdir / "driver.log"
        err = open(self.stderr_path, "ab")  # noqa: SIM115 - held by the child
        self.proc = subprocess.Popen(
            [
                java_bin(),
                *JVM_FLAGS,
                f"-Dlog4j2.configurationFile={log4j}",
                "-cp",
                install.classpath(driver=True),
                "KafkaDriver",
                bootstrap,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        err.close()
        self._buf = b""

    def request(self, cmd: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
        if self.proc.poll() is not None:
            raise KafkaSetupError(f"the Kafka client driver exited ({self.proc.returncode})")
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise KafkaSetupError(
                    f"the Kafka client driver did not answer {cmd.get('op')} in {timeout:g} s"
                )
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = self.proc.stdout.read1(1 << 16)  # type: ignore[attr-defined]
                if not chunk:
                    raise KafkaSetupError("the Kafka client driver closed its output")
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        ans = json.loads(line)
        if not ans.get("ok"):
            raise DriverError(str(ans.get("error", "unknown error")))
        return ans

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(Exception):  # closing: a dead driver is fine
                self.request({"op": "stop"}, timeout=5)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
