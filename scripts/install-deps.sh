#!/usr/bin/env bash
# Installs every Debian package fieldproof's build, tests and benchmarks need, and the npm
# test-only tools. Idempotent: does nothing (and needs no network) when all is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libzmq3-dev cppzmq-dev libsodium-dev python3-zmq python3-protobuf
  libprotobuf-dev protobuf-compiler libignition-msgs-dev libsdformat-dev libtinyxml2-dev
  libzstd-dev liblz4-dev zlib1g-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  iproute2 procps
  libxml2-utils
  clang libclang-rt-14-dev
  # The Slurm executor's test and bench start a private single-node cluster (tests/fleet/
  # slurm_cluster.hpp: its own slurm.conf, munge key and ports); the system daemons are not used.
  slurm-wlm munge
  chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node.js and npm run the test-only tools (tests/js); keep a Node.js that is already installed.
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "install-deps: every Debian package is present"
fi

# npm test tools, pinned by the lock file.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -f "$here/tests/js/package-lock.json" ]; then
  if [ ! -d "$here/tests/js/node_modules" ] || \
     [ "$here/tests/js/package-lock.json" -nt "$here/tests/js/node_modules/.package-lock.json" ]; then
    (cd "$here/tests/js" && npm ci --no-audit --no-fund)
  fi
fi
