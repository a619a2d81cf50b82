#!/usr/bin/env python3
"""A shaped TCP relay written apart from Dally's own (DallyFrugal.CountingRelay), to check the
slow-link behaviour against a link model that is not ours.

One bottleneck of RATE bytes/s shared by every connection and both directions (a FIFO of small
slices), ONE_WAY seconds added to every byte after it crosses, and optional cuts: every
connection is aborted once CUT bytes went up (a comma-separated list: a cut at each). Bytes are counted as they cross the bottleneck,
so what a cut drops while it is in the delay line counts as sent. Counts go to COUNTS (JSON,
rewritten every 50 ms); with TRACE=1 each request and status line is printed with the time it
crossed, and every 100 ms the bytes each connection moved up; with HEADS=1 as well, each
request's and answer's whole head and its size (where the bytes of a small exchange go).

Environment: LISTEN (port), UPSTREAM (port on 127.0.0.1), RATE (128000), ONE_WAY (0.3),
CUT (0: never; or a list, e.g. 100000,200000), SLICE (1460), COUNTS, TRACE, HEADS.
"""
import asyncio
import json
import os
import signal
import time

LISTEN = int(os.environ["LISTEN"])
UPSTREAM = int(os.environ["UPSTREAM"])
RATE = float(os.environ.get("RATE", "128000"))
ONE_WAY = float(os.environ.get("ONE_WAY", "0.3"))
CUTS = sorted(int(c) for c in os.environ.get("CUT", "0").split(",") if int(c) > 0)
SLICE = int(os.environ.get("SLICE", "1460"))
COUNTS = os.environ.get("COUNTS", "counts.json")
TRACE = os.environ.get("TRACE") == "1"
HEADS = os.environ.get("HEADS") == "1"
T0 = time.time()

link = {"up": 0, "down": 0, "connections": 0, "free_at": 0.0}
open_connections = set()


def write_counts():
    with open(COUNTS + ".tmp", "w") as f:
        json.dump({k: link[k] for k in ("up", "down", "connections")}, f)
    os.replace(COUNTS + ".tmp", COUNTS)


class Connection:
    count = 0

    def __init__(self, client_writer, upstream_writer):
        Connection.count += 1
        self.number = Connection.count
        self.client_writer, self.upstream_writer = client_writer, upstream_writer
        self.dead = False
        self.up_bytes = self.up_bytes_seen = 0

    def abort(self):
        if self.dead:
            return
        self.dead = True
        open_connections.discard(self)
        for writer in (self.client_writer, self.upstream_writer):
            writer.transport.abort()

    async def pipe(self, reader, up):
        """Moves one direction's bytes through the shared bottleneck, a slice at a time."""
        loop = asyncio.get_running_loop()
        target = self.upstream_writer if up else self.client_writer
        try:
            while True:
                data = await reader.read(SLICE)
                if not data:
                    loop.call_later(ONE_WAY + max(0.0, link["free_at"] - loop.time()), self.end, target)
                    return
                now = loop.time()
                # A busy link goes on from where its last slice ended even when this read comes a
                # little late (the event loop's timers wake late by a millisecond or so): counted
                # from `now`, each late wake would idle the link, and one connection alone got
                # ~92 % of the rate. Idle for longer than a slice, it starts from now.
                free = link["free_at"]
                link["free_at"] = (free if now - free < SLICE / RATE else now) + len(data) / RATE
                await asyncio.sleep(link["free_at"] - now)
                if self.dead:
                    return
                link["up" if up else "down"] += len(data)
                if up:
                    self.up_bytes += len(data)
                loop.call_later(ONE_WAY, self.deliver, target, data)
                if TRACE:
                    self.trace(data, up)
                if up and CUTS and link["up"] >= CUTS[0]:
                    CUTS.pop(0)
                    print(f"{time.time() - T0:8.3f} cut at {link['up']} bytes up", flush=True)
                    for connection in list(open_connections):
                        connection.abort()
        except (ConnectionError, asyncio.CancelledError):
            self.abort()

    def deliver(self, target, data):
        if not self.dead:
            target.write(data)

    def end(self, target):
        if not self.dead and target.can_write_eof():
            target.write_eof()

    def trace(self, data, up):
        for method in (b"POST ", b"PUT ", b"GET ", b"HTTP/1.1 "):
            i = data.find(method)
            if i >= 0 and (i == 0 or data[i - 2:i] == b"\r\n"):
                line = data[i:data.find(b"\r\n", i)].decode(errors="replace")
                print(f"{time.time() - T0:8.3f} c{self.number} {'up' if up else 'dn'} {line[:90]} "
                      f"(up {link['up']} dn {link['down']})", flush=True)
                if HEADS:
                    end = data.find(b"\r\n\r\n", i)
                    head = data[i:end if end >= 0 else len(data)]
                    print(f"         head {len(head) + 4} bytes:", head.decode(errors="replace").replace("\r\n", " | "), flush=True)


async def accept(client_reader, client_writer):
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", UPSTREAM)
    except OSError:
        client_writer.transport.abort()
        return
    connection = Connection(client_writer, upstream_writer)
    open_connections.add(connection)
    link["connections"] += 1
    await asyncio.gather(connection.pipe(client_reader, True), connection.pipe(upstream_reader, False))


async def main():
    server = await asyncio.start_server(accept, "127.0.0.1", LISTEN, limit=SLICE)
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopped.set)
    print("listening", LISTEN, flush=True)
    async with server:
        tick = 0
        while not stopped.is_set():
            await asyncio.sleep(0.05)
            write_counts()
            tick += 1
            if TRACE and tick % 2 == 0:
                moving = [(c.number, c.up_bytes - c.up_bytes_seen) for c in open_connections if c.up_bytes > c.up_bytes_seen]
                for c in open_connections:
                    c.up_bytes_seen = c.up_bytes
                if moving:
                    print(f"{time.time() - T0:8.3f} up " + " ".join(f"c{n}:{d}" for n, d in moving), flush=True)
    write_counts()


asyncio.run(main())
