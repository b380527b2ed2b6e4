# A throwaway PostgreSQL cluster for the tests: Debian's PostgreSQL, a data folder in a
# temporary directory, a free loopback port, password (SCRAM) authentication.
# Usage: source Scripts/lib/packages.sh; source Scripts/lib/postgres.sh; start_postgres
# Sets RELATA_POSTGRES_URL (postgres://relata:…@127.0.0.1:PORT/relata) and stops the cluster
# and removes its folder when the script exits. The cluster speaks TLS too, with a self-signed
# certificate for 127.0.0.1 whose PEM file RELATA_POSTGRES_CA names (the sslmode tests use it).

start_postgres() {
    require_packages postgresql
    local bin
    bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
    RELATA_POSTGRES_DIR="$(mktemp -d "${TMPDIR:-/tmp}/relata-postgres.XXXXXX")"
    # PostgreSQL refuses to run as root: as root, the cluster belongs to Debian's postgres user.
    RELATA_POSTGRES_RUN=()
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres "$RELATA_POSTGRES_DIR"
        RELATA_POSTGRES_RUN=(runuser -u postgres --)
    fi
    local password port
    password="relata-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    printf '%s\n' "$password" > "$RELATA_POSTGRES_DIR/password"
    [ ${#RELATA_POSTGRES_RUN[@]} -gt 0 ] && chown postgres "$RELATA_POSTGRES_DIR/password"
    "${RELATA_POSTGRES_RUN[@]}" "$bin/initdb" -D "$RELATA_POSTGRES_DIR/data" -U relata --pwfile="$RELATA_POSTGRES_DIR/password" \
        --auth=scram-sha-256 -E UTF8 --locale=C.UTF-8 > "$RELATA_POSTGRES_DIR/initdb.log" 2>&1 \
        || { cat "$RELATA_POSTGRES_DIR/initdb.log"; return 1; }
    # A self-signed certificate for 127.0.0.1, valid two days: TLS is offered, not required.
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$RELATA_POSTGRES_DIR/data/server.key" -out "$RELATA_POSTGRES_DIR/data/server.crt" > "$RELATA_POSTGRES_DIR/openssl.log" 2>&1 \
        || { cat "$RELATA_POSTGRES_DIR/openssl.log"; return 1; }
    chmod 600 "$RELATA_POSTGRES_DIR/data/server.key"
    cp "$RELATA_POSTGRES_DIR/data/server.crt" "$RELATA_POSTGRES_DIR/ca.pem"
    chmod 644 "$RELATA_POSTGRES_DIR/ca.pem"
    [ ${#RELATA_POSTGRES_RUN[@]} -gt 0 ] && chown postgres "$RELATA_POSTGRES_DIR/data/server.key" "$RELATA_POSTGRES_DIR/data/server.crt"
    # fsync off: the cluster is thrown away; durability is not what the tests measure. Waits for
    # locks and statements over 10 s are logged, for postgres_log_excerpt after a failed run.
    "${RELATA_POSTGRES_RUN[@]}" "$bin/pg_ctl" -D "$RELATA_POSTGRES_DIR/data" -l "$RELATA_POSTGRES_DIR/server.log" -w \
        -o "-p $port -k $RELATA_POSTGRES_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 -c ssl=on -c log_lock_waits=on -c log_min_duration_statement=10000" start > /dev/null \
        || { cat "$RELATA_POSTGRES_DIR/server.log"; return 1; }
    export RELATA_POSTGRES_CA="$RELATA_POSTGRES_DIR/ca.pem"
    RELATA_POSTGRES_BIN="$bin"
    trap stop_postgres EXIT
    PGPASSWORD="$password" "$bin/psql" -h 127.0.0.1 -p "$port" -U relata -d postgres -qc "CREATE DATABASE relata" > /dev/null
    export RELATA_POSTGRES_URL="postgres://relata:$password@127.0.0.1:$port/relata"
    echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $RELATA_POSTGRES_DIR)"
}

# What the cluster logged that may explain a stalled or failed test: waits for locks and for
# backends, statements over 10 s, sessions ended by force, crashes (the last 60 such lines).
postgres_log_excerpt() {
    [ -n "${RELATA_POSTGRES_DIR:-}" ] && [ -f "$RELATA_POSTGRES_DIR/server.log" ] || return 0
    echo "PostgreSQL's log, what may explain a failure (waits, slow statements, ended sessions):"
    grep -E "still waiting|acquired .* after|deadlock|duration: |terminat|PANIC|server process .* was|could not" \
        "$RELATA_POSTGRES_DIR/server.log" | tail -60 | sed 's/^/  /' || true
}

stop_postgres() {
    [ -n "${RELATA_POSTGRES_DIR:-}" ] || return 0
    "${RELATA_POSTGRES_RUN[@]}" "$RELATA_POSTGRES_BIN/pg_ctl" -D "$RELATA_POSTGRES_DIR/data" -m immediate -w stop > /dev/null 2>&1 || true
    rm -rf "$RELATA_POSTGRES_DIR"
    RELATA_POSTGRES_DIR=""
}
