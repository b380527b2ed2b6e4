#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs every test.
#   Scripts/test.sh            # everything
#   Scripts/test.sh --filter DeltaTests
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/packages.sh

# Rules run on JavaScriptCore (WebKitGTK's javascriptcoregtk-4.1); the
# benchmarks package (built here so it cannot rot, not run) links SQLite.
require_packages libjavascriptcoregtk-4.1-dev libsqlite3-dev

swift build --build-tests
# A hung test run fails here after 20 minutes instead of holding CI for its whole budget.
timeout 1200 swift test --skip-build "$@"

echo "Building the benchmarks package (not running it)…"
swift build --package-path Benchmarks --scratch-path .build-benchmarks
