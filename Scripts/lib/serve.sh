# Starts `relata serve` on a free port for a script, and stops it when the script exits.
# Usage: source Scripts/lib/serve.sh; start_server BIN FOLDER [SERVE-OPTION…]   # sets $server (pid) and $port
start_server() {
    local bin="$1" folder="$2"
    shift 2
    "$bin/relata" serve --port 0 --database "$folder/pctrade.sqlite" "$@" > "$folder/out" 2> "$folder/log" &
    server=$!
    trap 'kill "$server" 2>/dev/null || true; rm -rf "'"$folder"'"' EXIT
    port=""
    for _ in $(seq 1 100); do
        port="$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$folder/out" | head -1)"
        [ -n "$port" ] && return 0
        sleep 0.2
    done
    echo "relata serve did not start:" >&2
    cat "$folder/log" >&2
    exit 1
}

# Stops the server gracefully and waits for it.
stop_server() {
    kill -TERM "$server"
    wait "$server"
}
