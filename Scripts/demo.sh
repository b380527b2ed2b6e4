#!/usr/bin/env bash
# The README's main job: the core tour (load the example Clients table, edit
# rows, show states, originals, the delta), business rules in JavaScript on the
# same table through the LocalDataAdapter, then the PCTrade example: a scenario
# of edits through `relata run` (each edit's verdict, some refused on purpose)
# and PCTrade's rule tests through `relata test`; then the data server over plain HTTP,
# and the client: `relata apply` (the same verdicts as offline) and the DataAccess
# example app (fetch, a local refusal, a briefcase, an apply with real keys merged, a
# refusal only the server can make).
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/packages.sh
require_packages libjavascriptcoregtk-4.1-dev
swift build --product relata-tour
swift build --product relata-rules-demo
swift build --product relata
swift build --product relata-data-access
bin="$(swift build --show-bin-path)"
"$bin/relata-tour"
echo
"$bin/relata-rules-demo"
echo
echo "== relata run: a PCTrade scenario (some edits break the rules on purpose) =="
status=0
"$bin/relata" run Examples/PCTrade/PCTrade.schema.json --edits Examples/PCTrade/edits/scenario.json || status=$?
if [ "$status" -ne 1 ]; then
    echo "demo: expected relata run to report refused edits (exit status 1), got $status" >&2
    exit 1
fi
echo
echo "== relata test: PCTrade's rule tests, with coverage =="
"$bin/relata" test Examples/PCTrade/PCTrade.schema.json --coverage
echo
echo "== relata serve: the data server, reached over plain HTTP =="
source Scripts/lib/serve.sh
start_server "$bin" "$(mktemp -d)"
echo "serving on port $port"
python3 Scripts/lib/server_demo.py "$port"
stop_server
echo "server stopped"
echo
echo "== the client: relata apply against a fresh server, the same verdicts as relata run offline =="
start_server "$bin" "$(mktemp -d)"
status=0
RELATA_USER=demo RELATA_PASSWORD=demo "$bin/relata" apply "http://127.0.0.1:$port" --service DataService.PCTrade \
    --edits Examples/PCTrade/edits/scenario.json || status=$?
if [ "$status" -ne 1 ]; then
    echo "demo: expected relata apply to report refused edits (exit status 1), got $status" >&2
    exit 1
fi
echo
echo "== the client: the DataAccess example app (seed 004) =="
home="$(mktemp -d)"
RELATA_SERVER="http://127.0.0.1:$port" DATA_ACCESS_HOME="$home" "$bin/relata-data-access"
rm -rf "$home"
stop_server
echo "server stopped"
