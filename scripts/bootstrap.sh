#!/usr/bin/env bash
# One command for a fresh machine: install the build dependencies, build (Release), run a real example plan.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
./build/ftbound plan examples/llama3.1-8b-lora-r760xa.yaml
