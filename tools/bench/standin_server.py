#!/usr/bin/env python3
"""Tiny stand-in for the Dally gateway, used ONLY to self-test the bench scripts.

It implements just the routes the bench tools touch, in memory, with the same JSON
shapes as the gateway (no SQLite, no fsync): its numbers mean nothing. Use it to
check that put.lua / batch.lua / fanout.py / run.sh work end to end while the real
gateway binary is not built yet:

    python3 tools/bench/standin_server.py --port 18080 &        # or:
    STANDIN=1 SKIP_BUILD=1 FANOUT_N=1000 tools/bench/run.sh

Routes: GET /healthz, PUT /v1/tables/{t}/rows/{id}, POST /v1/tables/{t}/batch,
GET /v1/tables/{t}/changes?since=&wait= (long-poll), GET /stats (admin token).
Binds 127.0.0.1 only. It exits by itself after --lifetime seconds (default 1800).
"""
import argparse
import asyncio
import bisect
import json
import os
import resource
import sys
import time
import urllib.parse

CLIENT_TOKEN = "bench-client-token-0123456789"
ADMIN_TOKEN = "bench-admin-token-0123456789"
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 413: "Payload Too Large"}


class Store:
    def __init__(self, max_wait):
        self.seq = 0
        self.tables = {}     # table -> {id: row}
        self.log = {}        # table -> [row, ...] in seq order
        self.waiters = {}    # table -> set of futures
        self.max_wait = max_wait

    def write(self, table, rid, values, deleted=False):
        self.seq += 1
        row = {"id": rid, "seq": self.seq, "updated_at": int(time.time() * 1000),
               "deleted": deleted, "version": None, "values": values}
        self.tables.setdefault(table, {})[rid] = row
        self.log.setdefault(table, []).append(row)
        return row

    def wake(self, table):
        for fut in self.waiters.pop(table, set()):
            if not fut.done():
                fut.set_result(None)

    def changes(self, table, since, limit=1000):
        log = self.log.get(table, [])
        i = bisect.bisect_right(log, since, key=lambda r: r["seq"])
        return log[i:i + limit]

    def n_waiters(self):
        return sum(len(s) for s in self.waiters.values())


def respond(writer, status, obj, keep_alive=True):
    body = json.dumps(obj, separators=(",", ":")).encode()
    head = (f"HTTP/1.1 {status} {REASONS.get(status, 'X')}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
            f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n")
    writer.write(head.encode() + body)


async def handle(store, method, target, headers, body, writer):
    u = urllib.parse.urlsplit(target)
    q = dict(urllib.parse.parse_qsl(u.query))
    parts = [p for p in u.path.split("/") if p]
    auth = headers.get("authorization", "")
    token = auth[7:] if auth.lower().startswith("bearer ") else None
    if method == "GET" and u.path == "/healthz":
        return respond(writer, 200, {"status": "ok"})
    if method == "GET" and u.path == "/stats":
        if token != ADMIN_TOKEN:
            return respond(writer, 401, {"error": "unauthorized"})
        return respond(writer, 200, {"waiters": {"current": store.n_waiters(), "limit": 20000},
                                     "last_seq": store.seq})
    if token not in (CLIENT_TOKEN, ADMIN_TOKEN):
        return respond(writer, 401, {"error": "unauthorized"})
    if len(parts) >= 4 and parts[0] == "v1" and parts[1] == "tables":
        table = parts[2]
        if method == "PUT" and len(parts) == 5 and parts[3] == "rows":
            try:
                values = json.loads(body)["values"]
            except (ValueError, KeyError, TypeError):
                return respond(writer, 400, {"error": "bad body"})
            row = store.write(table, urllib.parse.unquote(parts[4]), values)
            store.wake(table)
            return respond(writer, 200, row)
        if method == "POST" and len(parts) == 4 and parts[3] == "batch":
            try:
                doc = json.loads(body)
            except ValueError:
                return respond(writer, 400, {"error": "bad body"})
            saved = []
            for item in doc.get("created", []) + doc.get("updated", []):
                store.write(table, item["id"], item.get("values", {}))
                saved.append(item["id"])
            for item in doc.get("deleted", []):
                store.write(table, item["id"], {}, deleted=True)
                saved.append(item["id"])
            store.wake(table)
            return respond(writer, 200, {"saved": saved, "errors": [], "seq": store.seq})
        if method == "GET" and len(parts) == 4 and parts[3] == "rows":
            since, limit = int(q.get("since", "0")), int(q.get("limit", "100"))
            rows = store.changes(table, since)
            page = rows[:limit]
            return respond(writer, 200, {"rows": page, "since": since,
                                         "next_since": page[-1]["seq"] if page else since, "more": len(rows) > limit})
        if method == "GET" and len(parts) == 4 and parts[3] == "changes":
            since = int(q.get("since", "0"))
            wait = min(float(q.get("wait", "0")), store.max_wait)
            rows = store.changes(table, since)
            if not rows and wait > 0:
                fut = asyncio.get_running_loop().create_future()
                store.waiters.setdefault(table, set()).add(fut)
                try:
                    await asyncio.wait_for(fut, wait)
                except asyncio.TimeoutError:
                    pass
                finally:
                    store.waiters.get(table, set()).discard(fut)
                rows = store.changes(table, since)
            last = rows[-1]["seq"] if rows else since
            return respond(writer, 200, {"changes": rows, "since": last, "more": False})
    return respond(writer, 404, {"error": "not found"})


async def serve_conn(store, reader, writer):
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
                break
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            n = int(headers.get("content-length", "0"))
            body = await reader.readexactly(n) if n else b""
            await handle(store, method, target, headers, body, writer)
            await writer.drain()
            if headers.get("connection", "").lower() == "close":
                break
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18080)
    ap.add_argument("--max-wait", type=float, default=120.0)
    ap.add_argument("--lifetime", type=float, default=1800.0, help="exit after this many seconds")
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    store = Store(args.max_wait)
    server = await asyncio.start_server(lambda r, w: serve_conn(store, r, w), "127.0.0.1", args.port,
                                        backlog=4096, limit=32 * 1024 * 1024)
    print(f"stand-in listening on 127.0.0.1:{args.port} pid={os.getpid()}", file=sys.stderr, flush=True)
    async with server:
        try:
            await asyncio.wait_for(server.serve_forever(), args.lifetime)
        except asyncio.TimeoutError:
            print("stand-in: lifetime reached, exiting", file=sys.stderr)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
