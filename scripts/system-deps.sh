#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, when they are missing. Idempotent.
set -euo pipefail
need=()
for pkg in $(cat "$(dirname "$0")/debian-packages.txt" 2>/dev/null); do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages: ${need[*]} (run as root, or: sudo apt-get install ${need[*]})" >&2
  exit 1
fi
echo "installing Debian packages: ${need[*]}" >&2
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
