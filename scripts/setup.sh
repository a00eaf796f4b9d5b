#!/usr/bin/env bash
# Installs the Debian (bookworm) packages ftbound builds with. Safe to re-run.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config
          libcli11-dev nlohmann-json3-dev libsimdjson-dev libfmt-dev libyaml-dev libyaml-cpp-dev zlib1g-dev
          libgtest-dev libgmock-dev libvalijson-dev libtomlplusplus-dev libbenchmark-dev libopenblas-dev libhwloc-dev python3
          libcpp-httplib-dev chromium
          openmpi-bin libopenmpi-dev)   # Open MPI: `probe --cluster` and its mpirun test
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
