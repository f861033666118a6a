"""Apache Kafka from Maven Central, fetched once per release into an ignored folder.

`ensure(version)` returns a `KafkaInstall` (the classpath of the broker, its tools and clients,
and the compiled client driver `KafkaDriver.java`). Nothing fetched is ever committed: jars go to
``<repo>/.kafka/<version>/lib`` (or ``$ISR_KAFKA_HOME/<version>/lib``), listed in .gitignore.
A missing Java, Maven or network is one `KafkaSetupError` line, which the CLI turns into exit 2.

`python -m isr.traces.conformance.apache_kafka.install [VERSION ...]` fetches and compiles ahead
of time (README's test command runs it through the test suite's set-up).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
DRIVER_SRC = HERE / "KafkaDriver.java"

# The releases the kit knows. The newest 4.x that resolved on Maven Central here, and 4.0.x, whose
# defaults differ (ELR off: `eligible.leader.replicas.version` is not set by a 4.0 format).
NEWEST = "4.4.0"
OLDER = "4.0.2"
KNOWN = (NEWEST, "4.3.1", "4.2.0", "4.1.1", OLDER)


class KafkaSetupError(Exception):
    """Java, Maven or the network is missing, or a fetched release is broken: exit 2, one line."""


@dataclass(frozen=True)
class KafkaInstall:
    version: str
    home: Path  # .kafka/<version>

    @property
    def lib(self) -> Path:
        return self.home / "lib"

    @property
    def driver_dir(self) -> Path:
        return self.home / "driver"

    @property
    def dump_log_segments(self) -> str:
        """Kafka's log dumper: in kafka-tools (Java) since 4.1, in the broker jar (Scala) in 4.0."""
        import zipfile

        for jar in self.lib.glob("kafka-tools-*.jar"):
            with zipfile.ZipFile(jar) as z:
                if "org/apache/kafka/tools/DumpLogSegments.class" in z.namelist():
                    return "org.apache.kafka.tools.DumpLogSegments"
        return "kafka.tools.DumpLogSegments"

    def classpath(self, driver: bool = False) -> str:
        cp = str(self.lib / "*")
        return f"{cp}{os.pathsep}{self.driver_dir}" if driver else cp


def kafka_root() -> Path:
    """Where releases are kept: $ISR_KAFKA_HOME, else .kafka/ at the repository's root (the
    folder holding pyproject.toml above this file), else ~/.cache/isr-kafka for an installed
    wheel."""
    env = os.environ.get("ISR_KAFKA_HOME")
    if env:
        return Path(env)
    for parent in HERE.parents:
        if (parent / "pyproject.toml").is_file():
            return parent / ".kafka"
    return Path.home() / ".cache" / "isr-kafka"


def java_bin() -> str:
    """The `java` to run Kafka with: $JAVA_HOME/bin/java, else the one on PATH (Java 17+)."""
    jh = os.environ.get("JAVA_HOME")
    if jh and (Path(jh) / "bin" / "java").is_file():
        return str(Path(jh) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise KafkaSetupError(
            "no Java found: Apache Kafka 4.x needs Java 17 (set JAVA_HOME or PATH)"
        )
    return found


def _tool(name: str) -> str:
    jh = os.environ.get("JAVA_HOME")
    if name == "javac" and jh and (Path(jh) / "bin" / "javac").is_file():
        return str(Path(jh) / "bin" / "javac")
    found = shutil.which(name)
    if not found:
        what = "Maven (mvn)" if name == "mvn" else "a JDK's javac"
        raise KafkaSetupError(f"no {what} found: it is needed once to fetch Apache Kafka")
    return found


def ensure(version: str = NEWEST, quiet: bool = True) -> KafkaInstall:
    """Fetch `version` (if not yet here) and compile the driver against it. Safe to call from
    several processes at once (a lock file per release)."""
    if not version or any(c not in "0123456789." for c in version):
        raise KafkaSetupError(f"bad Kafka version {version!r}: expected a release like {NEWEST}")
    inst = KafkaInstall(version, kafka_root() / version)
    inst.home.mkdir(parents=True, exist_ok=True)
    with open(inst.home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (inst.home / ".fetched").exists():
            _fetch(inst, quiet)
        stamp = inst.driver_dir / ".built"
        src_mtime = DRIVER_SRC.stat().st_mtime
        if not stamp.exists() or stamp.stat().st_mtime < src_mtime:
            _compile(inst)
            stamp.touch()
    return inst


def _fetch(inst: KafkaInstall, quiet: bool) -> None:
    mvn = _tool("mvn")
    java_bin()
    tmp = inst.home / "lib.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = [
        mvn,
        "-B",
        "-f",
        str(POM),
        f"-Dkafka.version={inst.version}",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={tmp}",
        "dependency:copy-dependencies",
    ]
    if quiet:
        cmd.insert(1, "-q")
    if not quiet:
        print(f"fetching Apache Kafka {inst.version} from Maven Central ...", file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or not any(tmp.glob(f"kafka_2.13-{inst.version}.jar")):
        last = [ln for ln in (r.stdout + r.stderr).splitlines() if "ERROR" in ln][:1]
        why = last[0].strip() if last else f"mvn exited {r.returncode}"
        raise KafkaSetupError(
            f"could not fetch Apache Kafka {inst.version} from Maven Central "
            f"(no network, or no such release?): {why[:300]}"
        )
    shutil.rmtree(inst.lib, ignore_errors=True)
    tmp.rename(inst.lib)
    (inst.home / ".fetched").write_text(inst.version + "\n")


def _compile(inst: KafkaInstall) -> None:
    javac = _tool("javac")
    out = inst.driver_dir
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    r = subprocess.run(
        [
            javac,
            "-proc:none",
            "-nowarn",
            "-Xlint:-deprecation",
            "-d",
            str(out),
            "-cp",
            inst.classpath(),
            str(DRIVER_SRC),
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        first = next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr[:200])
        raise KafkaSetupError(
            f"the Kafka client driver did not compile against {inst.version}: {first}"
        )


def main(argv: list[str] | None = None) -> int:
    versions = (argv if argv is not None else sys.argv[1:]) or [NEWEST]
    try:
        for v in versions:
            inst = ensure(v, quiet=False)
            n = len(list(inst.lib.glob("*.jar")))
            print(f"Apache Kafka {v}: {n} jars in {inst.lib}")
    except KafkaSetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
