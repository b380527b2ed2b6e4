#!/usr/bin/env bash
# Fuzzes the data server's HTTP API with schemathesis (from PyPI) against the OpenAPI
# document it serves: `relata serve` on PCTrade, a logged-in token, and every operation
# driven with generated requests; any 5xx answer fails the run.
#   Scripts/api-fuzz.sh [EXAMPLES]     # examples per operation, 25 by default
set -euo pipefail
cd "$(dirname "$0")/.."
examples="${1:-25}"
venv=.build-tools/schemathesis
if [ ! -x "$venv/bin/schemathesis" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==4.32.5"
fi
swift build --product relata
bin="$(swift build --show-bin-path)"
source Scripts/lib/serve.sh
folder="$(mktemp -d)"
# demo is a Manager: AdminService answers it, so its answers are checked against the document too.
start_server "$bin" "$folder" --console-admin-role Manager
token="$(python3 - "$port" <<'PY'
import json, sys, urllib.request
request = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/v2/LoginService/Login", method="POST",
                                 data=json.dumps({"loginString": "User=demo;Password=demo"}).encode())
print(json.load(urllib.request.urlopen(request))["token"])
PY
)"
# Logout would end the token mid-run.
(cd "$folder" && "$OLDPWD/$venv/bin/schemathesis" run "http://127.0.0.1:$port/openapi.json" \
    -H "Authorization: Bearer $token" --checks not_a_server_error -n "$examples" --seed 1 \
    --exclude-operation-id Logout)
stop_server
