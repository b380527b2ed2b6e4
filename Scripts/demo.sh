#!/usr/bin/env bash
# The README's main job: the core tour (load the example Clients table, edit
# rows, show states, originals, the delta), then business rules in JavaScript
# on the same table through the LocalDataAdapter, with each edit's verdict.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/packages.sh
require_packages libjavascriptcoregtk-4.1-dev
swift build --product relata-tour
swift build --product relata-rules-demo
bin="$(swift build --show-bin-path)"
"$bin/relata-tour"
echo
"$bin/relata-rules-demo"
