#!/usr/bin/env bash
# The README's main job: the core tour (load the example Clients table, edit
# rows, show states, originals, the delta), business rules in JavaScript on the
# same table through the LocalDataAdapter, then the PCTrade example: a scenario
# of edits through `relata run` (each edit's verdict, some refused on purpose)
# and PCTrade's rule tests through `relata test`.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/packages.sh
require_packages libjavascriptcoregtk-4.1-dev
swift build --product relata-tour
swift build --product relata-rules-demo
swift build --product relata
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
folder="$(mktemp -d)"
"$bin/relata" serve --port 0 --database "$folder/pctrade.sqlite" > "$folder/out" 2> "$folder/log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$folder"' EXIT
port=""
for _ in $(seq 1 100); do
    port="$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$folder/out" | head -1)"
    [ -n "$port" ] && break
    sleep 0.2
done
if [ -z "$port" ]; then
    echo "demo: relata serve did not start" >&2
    cat "$folder/log" >&2
    exit 1
fi
cat "$folder/out"
python3 Scripts/lib/server_demo.py "$port"
kill -TERM "$server"
wait "$server"
echo "server stopped"
