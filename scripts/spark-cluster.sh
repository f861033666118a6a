#!/usr/bin/env bash
# A Spark standalone cluster on loopback: one master and two workers (1 core each), started from
# the pyspark installation (its bin/spark-class; pyspark ships no start-master.sh).
#
#   scripts/spark-cluster.sh start    start master + 2 workers, wait until both workers registered,
#                                     print the master URL (spark://127.0.0.1:PORT)
#   scripts/spark-cluster.sh stop     stop them (SIGTERM, then SIGKILL after 15 s), by pid file
#   scripts/spark-cluster.sh status   print the master URL and which daemons are running
#
# Environment:
#   PYTHON                  interpreter with pyspark (default .venv/bin/python, else python3)
#   ISR_SPARK_CLUSTER_DIR   pid files, logs, work dirs (default ${TMPDIR:-/tmp}/isr-spark-cluster-$USER)
#   ISR_SPARK_MASTER_PORT   master RPC port (default 7077)
#   ISR_SPARK_WORKERS       number of workers (default 2)
#   ISR_SPARK_WORKER_MEMORY memory each worker offers to executors (default 1g)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-}"
if [[ -z "$PYTHON" ]]; then
  if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
DIR="${ISR_SPARK_CLUSTER_DIR:-${TMPDIR:-/tmp}/isr-spark-cluster-${USER:-$(id -u)}}"
PORT="${ISR_SPARK_MASTER_PORT:-7077}"
WORKERS="${ISR_SPARK_WORKERS:-2}"
WORKER_MEMORY="${ISR_SPARK_WORKER_MEMORY:-1g}"
HOST=127.0.0.1
URL="spark://$HOST:$PORT"

export SPARK_LOCAL_IP=$HOST
export SPARK_DAEMON_MEMORY="${SPARK_DAEMON_MEMORY:-256m}"
export SPARK_NO_DAEMONIZE=1

spark_home() {
  "$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'
}

alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

launch() { # name class args...
  local name=$1; shift
  local home; home=$(spark_home)
  SPARK_HOME="$home" nohup "$home/bin/spark-class" "$@" >"$DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/$name.pid"
}

wait_for() { # file pattern count seconds
  local file=$1 pattern=$2 count=$3 seconds=$4 i
  for ((i = 0; i < seconds * 4; i++)); do
    if [[ -f "$file" ]] && (($(grep -c -- "$pattern" "$file" || true) >= count)); then
      return 0
    fi
    sleep 0.25
  done
  return 1
}

start() {
  mkdir -p "$DIR"
  if alive "$DIR/master.pid"; then
    echo "isr: a cluster is already running from $DIR (stop it first)" >&2
    exit 1
  fi
  rm -f "$DIR"/*.log "$DIR"/*.pid
  launch master org.apache.spark.deploy.master.Master \
    --host $HOST --port "$PORT" --webui-port 0
  if ! wait_for "$DIR/master.log" "Starting Spark master at" 1 60; then
    echo "isr: the Spark master did not start; see $DIR/master.log" >&2
    stop >/dev/null
    exit 1
  fi
  for ((w = 1; w <= WORKERS; w++)); do
    mkdir -p "$DIR/work-$w"
    launch "worker-$w" org.apache.spark.deploy.worker.Worker \
      --host $HOST --cores 1 --memory "$WORKER_MEMORY" --webui-port 0 \
      --work-dir "$DIR/work-$w" "$URL"
  done
  if ! wait_for "$DIR/master.log" "Registering worker" "$WORKERS" 90; then
    echo "isr: the workers did not register; see $DIR/*.log" >&2
    stop >/dev/null
    exit 1
  fi
  echo "$URL"
}

stop() {
  local f pid i
  for f in "$DIR"/worker-*.pid "$DIR"/master.pid; do
    [[ -f "$f" ]] || continue
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for ((i = 0; i < 60; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.25
      done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    rm -f "$f"
  done
  echo "stopped"
}

status() {
  local f running=0
  for f in "$DIR"/master.pid "$DIR"/worker-*.pid; do
    [[ -f "$f" ]] || continue
    if alive "$f"; then
      echo "$(basename "$f" .pid): running (pid $(cat "$f"))"
      running=1
    else
      echo "$(basename "$f" .pid): not running"
    fi
  done
  if ((running)); then echo "$URL"; else echo "no cluster running from $DIR"; return 3; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
