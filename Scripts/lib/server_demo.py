"""The data server part of the demo: log in, fetch, apply over plain HTTP (protocol v2).

Usage: server_demo.py PORT
"""
import json
import sys
import urllib.error
import urllib.request

base = f"http://127.0.0.1:{sys.argv[1]}"


def post(path, body, token=None):
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def change(change_id, client_id, old, new):
    return {"changeId": change_id, "type": "update", "status": "pending", "refreshedValues": {},
            "oldValues": {"ClientId": {"integer": client_id}, **old}, "newValues": new}


status, answer = post("/v2/LoginService/Login", {"loginString": "User=demo;Password=demo"})
assert status == 200, answer
token = answer["token"]
print(f"logged in as demo, roles {answer['session']['roles']}")

status, answer = post("/v2/DataService.PCTrade/GetData",
                      {"requests": [{"table": "Clients", "fields": ["ClientId", "ClientName", "ContactPhone", "ClientDiscount"],
                                     "where": "Active = TRUE", "parameters": {}, "maxRecords": 3}]}, token)
assert status == 200, answer
table = answer["tables"][0]
print(f"fetched {len(table['rows'])} rows of {table['name']}:")
for row in table["rows"]:
    print("   ", row)

delta = {"tableName": "Clients", "keyFields": ["ClientId"], "loggedFields": ["ClientId", "ContactPhone", "ClientDiscount"],
         "changes": [
             # A valid change: it lands.
             change(1, 1, {"ContactPhone": {"string": table["rows"][0][2]}}, {"ContactPhone": {"string": "+351 21 000 0000"}}),
             # A tampered change, made without the client running the rules: the server's rules refuse it.
             change(2, 2, {"ClientDiscount": {"double": 0}}, {"ClientDiscount": {"double": 0.9}}),
         ]}
status, answer = post("/v2/DataService.PCTrade/UpdateData", {"deltas": [delta]}, token)
assert status == 200, answer
verdicts = answer["deltas"][0]["changes"]
for verdict in verdicts:
    failure = verdict.get("failure")
    if failure:
        print(f"change {verdict['changeId']}: refused by the server ({failure['kind']} in {failure.get('event')}, "
              f"{failure.get('file')}:{failure.get('line')}:{failure.get('column')}): {failure['message']}")
    else:
        print(f"change {verdict['changeId']}: {verdict['status']}")
assert [v["status"] for v in verdicts] == ["resolved", "failed"], verdicts
post("/v2/LoginService/Logout", {}, token)
print("logged out")
