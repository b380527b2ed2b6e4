#!/usr/bin/env bash
# The README's main job: a short scenario through the core — load the example
# Clients table, edit rows, show states, originals, the delta and its acceptance.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/packages.sh
require_packages   # the core needs nothing beyond the Swift toolchain
swift build --product relata-tour
"$(swift build --show-bin-path)/relata-tour"
