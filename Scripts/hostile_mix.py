#!/usr/bin/env python3
"""The hostile mix: one `relata serve`, every kind of bad client at once, and a well-behaved
client whose every request must still complete quickly.

Usage: Scripts/hostile_mix.py RELATA_BINARY DATABASE [--seconds N]
  DATABASE is a SQLite file path (created) or a postgres:// URL of an empty database.

At the same time, for N seconds (20 by default):
  - stalled readers: large GetData answers (plain, and filtered by a calculated field) on
    sockets that never read, reopened as the server closes them;
  - slowloris: request heads trickled a byte at a time and never finished;
  - half-sent bodies: a head and part of a body, then nothing;
  - a login flood: logins with random user names (no lockout stops them);
  - engine-heavy DA SQL queries, and the same query from a client that disconnects;
while a well-behaved client logs in, reads, applies a change and logs out in a loop. Each of
its requests must succeed within BOUND seconds; the server's memory must stay under
MEMORY_BOUND; afterwards a whole-table read works and SIGTERM stops the server cleanly.
Exits 0 when all of that held, 1 otherwise (saying what did not).
"""
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

BOUND = 5.0                  # seconds any request of the well-behaved client may take
MEMORY_BOUND = 1536 << 20    # bytes of resident memory the server may reach
ROWS = 150_000               # rows of the large table

failures = []
stop = threading.Event()


def fail(message):
    failures.append(message)
    print("FAILED: " + message, flush=True)


def write_domain(folder):
    """A schema with a large table, a calculated field, and one user."""
    with open(os.path.join(folder, "items.csv"), "w") as csv:
        csv.write("Id,Name,Qty,Price\n")
        for i in range(1, ROWS + 1):
            csv.write(f"{i},Item number {i} with a name long enough to fill a stream,{i % 9 + 1},{(i % 100) + 0.5}\n")
    with open(os.path.join(folder, "items.js"), "w") as script:
        script.write("function total(row) { return row.Qty * row.Price; }\n")
    schema = {"name": "Mix", "tables": [{
        "name": "Items", "data": "items.csv", "script": "items.js",
        "fields": [{"name": "Id", "type": "integer", "primaryKey": True}, {"name": "Name", "type": "string", "size": 80},
                   {"name": "Qty", "type": "integer"}, {"name": "Price", "type": "float"}],
        "calculatedFields": [{"name": "Total", "type": "float", "function": "total"}]}]}
    with open(os.path.join(folder, "Mix.schema.json"), "w") as file:
        json.dump(schema, file)


def start_server(binary, folder, database):
    hashed = subprocess.run([binary, "hash-password", "--cost", "4"], input="secret\n", capture_output=True, text=True,
                            timeout=60, check=True).stdout.strip()
    with open(os.path.join(folder, "users.json"), "w") as users:
        json.dump([{"name": "ann", "passwordHash": hashed, "roles": ["Staff"]}], users)
    log = open(os.path.join(folder, "server.log"), "w")
    process = subprocess.Popen([binary, "serve", os.path.join(folder, "Mix.schema.json"), "--database", database,
                                "--users", os.path.join(folder, "users.json"), "--port", "0",
                                "--write-timeout", "2", "--idle-timeout", "3", "--body-timeout", "3",
                                "--query-time-limit", "2", "--login-queue", "8"],
                               stdout=subprocess.PIPE, stderr=log, text=True)
    deadline = time.monotonic() + 300
    line = ""
    while time.monotonic() < deadline and process.poll() is None:
        line = process.stdout.readline()
        if "serving" in line:
            break
    match = re.search(r"127\.0\.0\.1:(\d+)", line)
    if not match:
        process.kill()
        raise SystemExit(f"the server did not start: {line!r} (log in {folder}/server.log)")
    threading.Thread(target=lambda: process.stdout.read(), daemon=True).start()
    return process, int(match.group(1))


def post(port, path, body, token=None, timeout=30.0):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def login(port):
    status, answer = post(port, "/v2/LoginService/Login", {"loginString": "User=ann;Password=secret"})
    if status != 200:
        raise RuntimeError(f"login answered {status}: {answer}")
    return answer["token"]


def raw_request(port, token, body, accept="application/vnd.relata.rows"):
    """A socket that sends a whole GetData request and then never reads."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=10)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    data = json.dumps(body).encode()
    connection.sendall((f"POST /v2/DataService/GetData HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                        f"Accept: {accept}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n").encode() + data)
    return connection


def still_open(sockets):
    """The sockets the server has not closed (without reading what waits on them)."""
    alive = []
    for connection in sockets:
        try:
            connection.setblocking(False)
            if connection.recv(1, socket.MSG_PEEK) == b"":
                connection.close()
                continue
        except BlockingIOError:
            pass
        except OSError:
            connection.close()
            continue
        alive.append(connection)
    return alive


def stalled_readers(port, token, where):
    """Keeps two stalled readers open, replacing each the server closes."""
    body = {"requests": [{"table": "Items", "where": where, "parameters": {}} if where else {"table": "Items", "parameters": {}}]}
    sockets = []
    while not stop.is_set():
        sockets = still_open(sockets)
        while len(sockets) < 2 and not stop.is_set():
            try:
                sockets.append(raw_request(port, token, body))
            except OSError:
                break
        stop.wait(0.5)
    for connection in sockets:
        connection.close()


def slowloris(port):
    sockets = []
    while not stop.is_set():
        while len(sockets) < 30:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=5)
                connection.sendall(b"POST /v2/DataService/GetData HTTP/1.1\r\nHost: x\r\n")
                sockets.append(connection)
            except OSError:
                break
        alive = []
        for connection in sockets:
            try:
                connection.sendall(b"X")
                alive.append(connection)
            except OSError:
                connection.close()
        sockets = alive
        stop.wait(1.0)
    for connection in sockets:
        connection.close()


def half_bodies(port, token):
    sockets = []
    while not stop.is_set():
        while len(sockets) < 30:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=5)
                connection.sendall((f"POST /v2/DataService/GetData HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                                    "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"requests\":").encode())
                sockets.append(connection)
            except OSError:
                break
        stop.wait(1.0)
        sockets = still_open(sockets)
    for connection in sockets:
        connection.close()


def login_flood(port):
    while not stop.is_set():
        name = "stranger%06d" % random.randrange(1_000_000)
        try:
            post(port, "/v2/LoginService/Login", {"loginString": f"User={name};Password=guess"}, timeout=30)
        except OSError:
            pass


HEAVY = ("SELECT COUNT(*) AS N FROM Items a WHERE EXISTS (SELECT b.Id FROM Items b WHERE UPPER(b.Name) <> LOWER(a.Name) "
         "AND EXISTS (SELECT c.Id FROM Items c WHERE UPPER(c.Name) = UPPER(b.Name) AND c.Id = a.Id + b.Id + 1000000))")


def heavy_queries(port, token):
    while not stop.is_set():
        started = time.monotonic()
        try:
            status, answer = post(port, "/v2/DataService/SQLGetData", {"sql": HEAVY, "parameters": {}}, token=token, timeout=60)
            took = time.monotonic() - started
            code = answer.get("error", {}).get("code")
            if status == 200:
                fail(f"the engine-heavy query ran to its end ({took:.1f} s) instead of being stopped")
            elif code != "timeLimitExceeded":
                fail(f"the engine-heavy query answered {status} {answer} instead of being stopped at its time limit")
            elif took > 30:
                fail(f"the engine-heavy query was stopped only after {took:.1f} s (limit 2 s)")
        except OSError as error:
            fail(f"the engine-heavy query failed without an answer: {error}")


def disconnecting_client(port, token):
    body = json.dumps({"sql": HEAVY, "parameters": {}}).encode()
    while not stop.is_set():
        try:
            connection = socket.create_connection(("127.0.0.1", port), timeout=5)
            connection.sendall((f"POST /v2/DataService/SQLGetData HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
            stop.wait(0.5)
            connection.close()
        except OSError:
            pass


def well_behaved(port, latencies):
    """Logs in, reads, applies one change and logs out, over and over; every request timed."""
    round_number = 0
    while not stop.is_set():
        round_number += 1
        steps = []
        try:
            started = time.monotonic()
            token = login(port)
            steps.append(("login", time.monotonic() - started, 200))
            started = time.monotonic()
            status, answer = post(port, "/v2/DataService/GetData", {"requests": [{"table": "Items", "where": "Id = 1", "parameters": {}}]}, token=token)
            steps.append(("read", time.monotonic() - started, status))
            name = answer["tables"][0]["rows"][0][1] if status == 200 else "Item number 1 with a name long enough to fill a stream"
            change = {"changeId": 1, "type": "update", "status": "pending", "refreshedValues": {},
                      "oldValues": {"Id": {"integer": 1}, "Name": {"string": name}},
                      "newValues": {"Name": {"string": f"Item one, round {round_number}"}}}
            started = time.monotonic()
            status, answer = post(port, "/v2/DataService/UpdateData",
                                  {"deltas": [{"tableName": "Items", "keyFields": ["Id"], "loggedFields": ["Id", "Name"], "changes": [change]}]},
                                  token=token)
            steps.append(("apply", time.monotonic() - started, status))
            if status == 200 and answer["deltas"][0]["changes"][0]["status"] != "resolved":
                fail(f"round {round_number}: the change was not applied: {answer['deltas'][0]['changes'][0]}")
            started = time.monotonic()
            status, _ = post(port, "/v2/LoginService/Logout", {}, token=token)
            steps.append(("logout", time.monotonic() - started, status))
        except Exception as error:  # noqa: BLE001 — any failure of the good client is the test's failure
            fail(f"round {round_number}: the well-behaved client failed: {error!r}")
            continue
        for step, took, status in steps:
            latencies.append(took)
            if status != 200:
                fail(f"round {round_number}: {step} answered {status}")
            if took > BOUND:
                fail(f"round {round_number}: {step} took {took:.2f} s (bound {BOUND} s)")


def resident_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    binary, database = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 20.0
    folder = tempfile.mkdtemp(prefix="relata-hostile-")
    write_domain(folder)
    if not database.startswith("postgres"):
        database = os.path.join(folder, database)
    process, port = start_server(binary, folder, database)
    print(f"hostile mix against {binary} on port {port} ({'PostgreSQL' if database.startswith('postgres') else 'SQLite'}), {seconds:.0f} s", flush=True)
    try:
        token = login(port)
        kinds = {
            "stalled": [threading.Thread(target=stalled_readers, args=(port, token, None))],
            "stalled-calculated": [threading.Thread(target=stalled_readers, args=(port, token, "Total > 0"))],
            "slowloris": [threading.Thread(target=slowloris, args=(port,))],
            "half-bodies": [threading.Thread(target=half_bodies, args=(port, token))],
            "heavy": [threading.Thread(target=heavy_queries, args=(port, token))],
            "disconnecting": [threading.Thread(target=disconnecting_client, args=(port, token))],
            "login-flood": [threading.Thread(target=login_flood, args=(port,)) for _ in range(6)],
        }
        # RELATA_HOSTILE=stalled,heavy runs only those kinds (to find which one hurts).
        chosen = os.environ.get("RELATA_HOSTILE", ",".join(kinds)).split(",")
        hostile = [thread for kind in chosen for thread in kinds[kind]]
        for thread in hostile:
            thread.daemon = True
            thread.start()
        time.sleep(2)   # let every hostile client get going before measuring
        latencies = []
        good = threading.Thread(target=well_behaved, args=(port, latencies), daemon=True)
        good.start()
        peak = 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            peak = max(peak, resident_bytes(process.pid))
            time.sleep(0.5)
        stop.set()
        good.join(60)
        for thread in hostile:
            thread.join(60)
        if good.is_alive():
            fail("the well-behaved client is still waiting 60 s after the mix ended")
        if not latencies:
            fail("the well-behaved client completed no request")
        if peak > MEMORY_BOUND:
            fail(f"the server's memory reached {peak >> 20} MiB (bound {MEMORY_BOUND >> 20} MiB)")
        latencies.sort()
        if latencies:
            print(f"well-behaved requests: {len(latencies)}, median {latencies[len(latencies) // 2] * 1000:.0f} ms, "
                  f"slowest {latencies[-1] * 1000:.0f} ms; server memory peak {peak >> 20} MiB", flush=True)
        # Everything recovers: a whole-table read of the large table completes.
        started = time.monotonic()
        status, answer = post(port, "/v2/DataService/GetData", {"requests": [{"table": "Items", "maxRecords": ROWS, "parameters": {}}]}, token=login(port), timeout=120)
        rows = len(answer.get("tables", [{}])[0].get("rows", [])) if status == 200 else 0
        if rows != ROWS:
            fail(f"after the mix, reading the whole table answered {status} with {rows} rows")
        print(f"after the mix: the whole table ({rows} rows) in {time.monotonic() - started:.1f} s", flush=True)
    except Exception as error:  # noqa: BLE001
        fail(f"the mix could not run: {error!r}")
    finally:
        stop.set()
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(30)
            if code != 0:
                fail(f"the server exited with {code} after SIGTERM (log: {folder}/server.log)")
        except subprocess.TimeoutExpired:
            process.kill()
            fail("the server ignored SIGTERM for 30 s")
    if failures:
        print(f"hostile mix: {len(failures)} failure(s); server log in {folder}/server.log", flush=True)
        sys.exit(1)
    print("hostile mix: every request of the well-behaved client completed in time", flush=True)


if __name__ == "__main__":
    main()
