#!/usr/bin/env python3
"""Watches a gateway's outbox drain until the table's outbox is empty or the deadline passes.

Polls GET /stats over one kept-alive connection, every 0.05 s until the first rows leave the
outbox (when the gateway found its cloud back), then every 0.25 s (a new curl and python per
poll cost the two cores a tenth of one; faster polls cost the gateway more CPU than that),
and takes the drain's end from the gateway itself: `sync.last_success_at`, when the sync
cycle that emptied the outbox ended, if it falls between the last two polls (else the poll
that saw the outbox empty). When the gateway found its cloud back comes from the gateway too:
its first uplink's `availability_changed_at` once the drain is over (the probe's answer that
made it available).

Usage: drain_watch.py GATEWAY_URL ADMIN_TOKEN TABLE ROWS_BEFORE DEADLINE_SECONDS
Prints one line: first_at first_left end_at left found_at (times: seconds since 1970; first_at
and first_left are "-" when no row left the outbox, found_at when the uplink is not available).
"""
import http.client
import json
import sys
import time
from urllib.parse import urlsplit

url, token, table, before, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
parts = urlsplit(url)
connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)


def stats():
    """The gateway's /stats, or None when this poll got no answer."""
    global connection
    try:
        connection.request("GET", "/stats", headers={"Authorization": f"Bearer {token}"})
        return json.loads(connection.getresponse().read())
    except (OSError, http.client.HTTPException, ValueError):
        connection.close()
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
        return None


left = before
first_at, first_left = "-", "-"
deadline = time.time() + limit
previous = time.time()
end = None
found = "-"
while time.time() < deadline:
    answer = stats()
    now = time.time()
    if answer is not None:
        counts = answer["tables"][table]
        left = counts["outbox_pending"] + counts["outbox_in_flight"]
        if first_at == "-" and left < before:
            first_at, first_left = f"{now:.3f}", str(left)
        if left == 0:
            success = (answer["sync"].get("last_success_at") or 0) / 1000
            end = success if previous <= success <= now else now
            uplink = answer["uplinks"][0]
            if uplink["available"] and uplink.get("availability_changed_at"):
                found = f"{uplink['availability_changed_at'] / 1000:.3f}"
            break
    previous = now
    time.sleep(0.05 if first_at == "-" else 0.25)
print(first_at, first_left, f"{end or time.time():.3f}", left, found)
