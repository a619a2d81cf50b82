#!/usr/bin/env python3
"""Long-poll fan-out benchmark for the Dally gateway.

What it measures: open N long-polls on GET /v1/tables/<table>/changes?since=<current>&wait=<s>
(default N=10000), wait (bounded) until GET /stats reports waiters.current >= N, then send
ONE PUT to that table and measure, for every waiter, the time from "PUT written to the
socket" to "its full response received" (Content-Length or chunked body parsed). A waiter
counts as answered when it gets a 200 whose body contains the PUT's row id.
Also samples the gateway's RSS from /proc/<pid>/status (idle, holding N, after delivery),
its peak RSS (VmHWM) and its CPU time from PUT to last answer, plus this client's CPU time
in the same window (if that is close to the wall time, the client was the bottleneck).

Client: plain asyncio Protocols on raw sockets (stdlib only), so 10000 sockets stay cheap.
It raises its own RLIMIT_NOFILE to the hard limit. The gateway needs enough fds too
(run.sh does `ulimit -n $(ulimit -Hn)` before starting it).

Safety: only loopback targets are accepted; connects go out in bounded batches; every
wait is bounded and a hard alarm ends the process; it sends exactly 2 PUTs (one to learn
the current seq, one to wake the waiters) unless --since is given (then 1).

Usage (gateway from tools/bench/run.sh, tokens from its bench config):
  python3 tools/bench/fanout.py --n 10000 --pid "$(pgrep -n dally)"   # or --pid from run.sh
  python3 tools/bench/fanout.py --n 1000 --base http://127.0.0.1:18080 --json-out /tmp/f.jsonl

Prints one parseable line:
  RESULT fanout n=.. connected=.. held=.. answered=.. p50_ms=.. p99_ms=.. max_ms=..
         rss_idle_mb=.. rss_holding_mb=.. rss_after_mb=.. ...
Exit status: 0 when every waiter was answered, 2 when not, 1 on a setup failure.
"""
import argparse
import asyncio
import ipaddress
import json
import os
import resource
import signal
import sys
import time
import urllib.parse


# ------------------------------------------------------------------ helpers
def loopback_only(base):
    host = urllib.parse.urlsplit(base).hostname
    if host == "localhost":
        return
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except (ValueError, TypeError):
        pass
    sys.exit(f"refusing non-loopback target {host!r}")


def proc_status_kib(pid, key):
    """VmRSS / VmHWM of pid in KiB, or None."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def proc_cpu_ms(pid):
    """utime+stime of pid (all threads) in ms, 10 ms tick resolution; None if unknown."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 // os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def self_cpu_ms():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1000.0


def mb(kib):
    return None if kib is None else round(kib / 1024.0, 1)


def pct(sorted_vals, p):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, -(-p * len(sorted_vals) // 100) - 1))
    return sorted_vals[int(k)]


def build_request(method, path, host, port, token=None, body=None):
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Accept: application/json"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    data = b""
    if body is not None:
        data = json.dumps(body, separators=(",", ":")).encode()
        lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def parse_response(buf):
    """(status, body) once buf holds one complete HTTP/1.1 response, else None.
    Understands Content-Length and Transfer-Encoding: chunked. Raises ValueError on junk."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = bytes(buf[:end]).split(b"\r\n")
    status = int(head[0].split(b" ", 2)[1])
    clen, chunked = None, False
    for line in head[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            clen = int(value.strip())
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    pos = end + 4
    if chunked:
        body = bytearray()
        while True:
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                return None
            size = int(bytes(buf[pos:eol]).split(b";", 1)[0].strip() or b"0", 16)
            pos = eol + 2
            if size == 0:
                # optional trailers end with an empty line
                tend = buf.find(b"\r\n\r\n", pos - 2)
                if tend < 0:
                    return None
                return status, bytes(body)
            if len(buf) < pos + size + 2:
                return None
            body += buf[pos:pos + size]
            pos += size + 2
    if clen is None:
        if status in (204, 304) or 100 <= status < 200:
            return status, b""
        return None  # body delimited by close: handled in connection_lost
    if len(buf) < pos + clen:
        return None
    return status, bytes(buf[pos:pos + clen])


class OneShot(asyncio.Protocol):
    """One HTTP request/response on its own connection. The result lands in .result as
    (t_done, status, body) or (None, error_text, b''); on_done(self) is called once."""

    __slots__ = ("transport", "buf", "result", "on_done", "pending_req")

    # --keep-open: leave the connection open after the answer, as a long-poll client that polls
    # again on the same keep-alive connection would; all are closed after delivery.
    keep_open = False

    def __init__(self, req=None, on_done=None):
        self.transport = None
        self.buf = bytearray()
        self.result = None
        self.on_done = on_done
        self.pending_req = req

    def connection_made(self, transport):
        self.transport = transport
        if self.pending_req is not None:
            transport.write(self.pending_req)
            self.pending_req = None

    def send(self, req):
        self.transport.write(req)

    def data_received(self, data):
        if self.result is not None:
            return
        self.buf += data
        try:
            parsed = parse_response(self.buf)
        except (ValueError, IndexError) as e:
            self._finish((None, f"bad response: {e!r}"[:80], b""))
            return
        if parsed is not None:
            self._finish((time.perf_counter(), parsed[0], parsed[1]), close=not OneShot.keep_open)

    def connection_lost(self, exc):
        if self.result is None:
            # a close-delimited body (no Content-Length) completes here
            try:
                end = self.buf.find(b"\r\n\r\n")
                if end >= 0:
                    status = int(bytes(self.buf[:end]).split(b"\r\n")[0].split(b" ", 2)[1])
                    self._finish((time.perf_counter(), status, bytes(self.buf[end + 4:])), close=False)
                    return
            except (ValueError, IndexError):
                pass
            self._finish((None, f"closed before response: {exc!r}"[:80], b""), close=False)

    def _finish(self, result, close=True):
        self.result = result
        self.buf = bytearray()
        if close and self.transport is not None:
            self.transport.close()
        if self.on_done is not None:
            self.on_done(self)


async def request(loop, host, port, req, timeout):
    """One request on a fresh connection → (status, body). Raises on failure/timeout."""
    fut = loop.create_future()

    def done(p):
        if not fut.done():
            fut.set_result(p.result)

    transport, proto = await asyncio.wait_for(
        loop.create_connection(lambda: OneShot(req, done), host, port), timeout)
    try:
        t, status, body = await asyncio.wait_for(fut, timeout)
    finally:
        transport.close()
    if t is None:
        raise RuntimeError(status)
    return status, body


# ------------------------------------------------------------------ the run
async def run(args):
    loop = asyncio.get_running_loop()
    u = urllib.parse.urlsplit(args.base.rstrip("/"))
    host, port = u.hostname, u.port or 80
    tag = f"{os.getpid()}-{int(time.time() * 1000)}"
    rows_path = f"/v1/tables/{args.table}/rows"
    res = {"n": args.n, "table": args.table, "wait_s": args.wait}

    def values(i):
        return {"values": {"name": f"fanout {tag}", "qty": i, "price": 1.5, "paid": True}}

    # 1. the current seq: from --since, else from a priming PUT's returned row
    since = args.since
    if since is None:
        status, body = await request(loop, host, port, build_request(
            "PUT", f"{rows_path}/fanout-prime-{tag}", host, port, args.token, values(0)), 30)
        if status != 200:
            raise RuntimeError(f"priming PUT failed: {status} {body[:200]!r}")
        since = int(json.loads(body)["seq"])
    res["since"] = since

    async def stats():
        status, body = await request(loop, host, port,
                                     build_request("GET", "/stats", host, port, args.admin_token), 10)
        if status != 200:
            raise RuntimeError(f"/stats answered {status}: {body[:200]!r}")
        w = json.loads(body).get("waiters", {})
        return int(w.get("current", -1)), w.get("limit")

    cur0, limit = await stats()
    res["waiters_limit"] = limit
    if isinstance(limit, int) and limit < args.n:
        print(f"warning: gateway waiters.limit={limit} < n={args.n}", file=sys.stderr)
    res["rss_idle_kib"] = proc_status_kib(args.pid, "VmRSS")

    # 2. open N long-polls in bounded batches
    wait_path = f"/v1/tables/{args.table}/changes?since={since}&wait={args.wait:g}"
    wait_req = build_request("GET", wait_path, host, port, args.token)
    finished = [0]
    all_done = asyncio.Event()

    def on_done(_p):
        finished[0] += 1
        if finished[0] >= len(waiters):
            all_done.set()

    waiters, transports, connect_errors = [], [], []

    async def open_one():
        last = None
        for attempt in range(3):
            try:
                p = OneShot(wait_req, on_done)
                tr, _ = await asyncio.wait_for(loop.create_connection(lambda: p, host, port), 10)
                waiters.append(p)
                transports.append(tr)
                return
            except (OSError, asyncio.TimeoutError) as e:
                last = e
                await asyncio.sleep(0.1 * (attempt + 1))
        connect_errors.append(repr(last)[:80])

    t_setup = time.perf_counter()
    connect_deadline = t_setup + args.connect_timeout
    opened = 0
    while opened < args.n and time.perf_counter() < connect_deadline:
        k = min(args.batch, args.n - opened)
        await asyncio.gather(*(open_one() for _ in range(k)))
        opened += k
        await asyncio.sleep(args.batch_pause)
    res["connected"] = len(waiters)
    res["connect_errors"] = len(connect_errors)
    res["connect_s"] = round(time.perf_counter() - t_setup, 2)
    if connect_errors:
        print(f"connect errors: {len(connect_errors)}, e.g. {connect_errors[:3]}", file=sys.stderr)

    # 3. bounded wait until the gateway holds them all
    held = -1
    ready_deadline = time.perf_counter() + args.ready_timeout
    while time.perf_counter() < ready_deadline:
        held, _ = await stats()
        if held - max(cur0, 0) >= len(waiters) or held >= args.n:
            break
        if waiters and finished[0] >= len(waiters):
            break  # every waiter was already answered or refused: nothing to wait for
        await asyncio.sleep(0.25)
    res["held"] = held
    res["setup_s"] = round(time.perf_counter() - t_setup, 2)
    early = sum(1 for p in waiters if p.result is not None)
    res["early"] = early  # answered before the PUT: stale since, timeouts, refusals
    if held < args.n:
        print(f"only {held}/{args.n} waiters held after {res['setup_s']} s", file=sys.stderr)
    if early:
        sample = [p.result[1] for p in waiters if p.result is not None][:3]
        print(f"{early} waiters finished before the PUT, e.g. {sample}", file=sys.stderr)

    if time.perf_counter() - t_setup + args.settle > 0.8 * args.wait:
        print(f"warning: setup took {res['setup_s']} s, close to wait={args.wait:g} s: early waiters "
              "may time out before the PUT (they count as 'before PUT')", file=sys.stderr)
    await asyncio.sleep(args.settle)
    res["rss_holding_kib"] = proc_status_kib(args.pid, "VmRSS")

    # 4. ONE PUT, then wait (bounded) for every waiter
    put_id = f"fanout-{tag}"
    put_fut = loop.create_future()
    put_proto = OneShot(None, lambda p: put_fut.done() or put_fut.set_result(p.result))
    put_tr, _ = await asyncio.wait_for(loop.create_connection(lambda: put_proto, host, port), 10)
    cpu_srv0, cpu_cli0 = proc_cpu_ms(args.pid), self_cpu_ms()
    put_proto.send(build_request("PUT", f"{rows_path}/{put_id}", host, port, args.token, values(1)))
    t0 = time.perf_counter()
    try:
        t_put, put_status, _ = await asyncio.wait_for(put_fut, args.deliver_timeout)
        res["put_status"] = put_status
        res["put_rtt_ms"] = round((t_put - t0) * 1000, 2) if t_put else None
    except asyncio.TimeoutError:
        res["put_status"], res["put_rtt_ms"] = "timeout", None
    put_tr.close()
    all_done.clear()  # may have been set while connecting (early finishers)
    if waiters and finished[0] < len(waiters):
        try:
            await asyncio.wait_for(all_done.wait(), max(0.1, t0 + args.deliver_timeout - time.perf_counter()))
        except asyncio.TimeoutError:
            pass
    t_end = time.perf_counter()
    cpu_srv1, cpu_cli1 = proc_cpu_ms(args.pid), self_cpu_ms()
    for tr in transports:
        tr.close()

    needle = put_id.encode()
    lat, errors = [], {}
    for p in waiters:
        r = p.result
        if r is None:
            errors["no answer in time"] = errors.get("no answer in time", 0) + 1
        elif r[0] is None or r[0] < t0:
            key = f"before PUT: status {r[1]}" if r[0] is not None else str(r[1])
            errors[key] = errors.get(key, 0) + 1
        elif r[1] != 200 or needle not in r[2]:
            key = f"status {r[1]}" if r[1] != 200 else "200 without the row"
            errors[key] = errors.get(key, 0) + 1
        else:
            lat.append((r[0] - t0) * 1000.0)
    lat.sort()
    res.update({
        "answered": len(lat),
        "errors": sum(errors.values()) + len(connect_errors),
        "error_kinds": errors,
        "p50_ms": round(pct(lat, 50), 2) if lat else None,
        "p90_ms": round(pct(lat, 90), 2) if lat else None,
        "p99_ms": round(pct(lat, 99), 2) if lat else None,
        "max_ms": round(lat[-1], 2) if lat else None,
        "deliver_s": round(t_end - t0, 3),
        "server_cpu_ms": (cpu_srv1 - cpu_srv0) if cpu_srv0 is not None and cpu_srv1 is not None else None,
        "client_cpu_ms": round(cpu_cli1 - cpu_cli0),
    })
    await asyncio.sleep(args.settle)
    res["rss_after_kib"] = proc_status_kib(args.pid, "VmRSS")
    res["rss_peak_kib"] = proc_status_kib(args.pid, "VmHWM")
    return res


def result_line(r):
    def f(v):
        return "na" if v is None else v
    keys = [("n", "n"), ("connected", "connected"), ("held", "held"), ("answered", "answered"),
            ("errors", "errors"), ("early", "early"), ("p50_ms", "p50_ms"), ("p90_ms", "p90_ms"),
            ("p99_ms", "p99_ms"), ("max_ms", "max_ms"), ("put_status", "put_status"),
            ("put_rtt_ms", "put_rtt_ms"), ("setup_s", "setup_s"), ("deliver_s", "deliver_s"),
            ("server_cpu_ms", "server_cpu_ms"), ("client_cpu_ms", "client_cpu_ms")]
    parts = ["RESULT fanout"] + [f"{name}={f(r.get(k))}" for k, name in keys]
    for k in ("rss_idle", "rss_holding", "rss_after", "rss_peak"):
        parts.append(f"{k}_mb={f(mb(r.get(k + '_kib')))}")
    return " ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="http://127.0.0.1:18080")
    ap.add_argument("--n", type=int, default=10000, help="long-polls to hold")
    ap.add_argument("--table", default="bench")
    ap.add_argument("--token", default=os.environ.get("DALLY_TOKEN", "bench-client-token-0123456789"))
    ap.add_argument("--admin-token", default=os.environ.get("DALLY_ADMIN_TOKEN", "bench-admin-token-0123456789"))
    ap.add_argument("--pid", type=int, default=None, help="gateway pid, for RSS/CPU from /proc")
    ap.add_argument("--since", type=int, default=None, help="skip the priming PUT and use this seq")
    ap.add_argument("--wait", type=float, default=120.0, help="wait= of each long-poll (s)")
    ap.add_argument("--batch", type=int, default=250, help="connects per batch")
    ap.add_argument("--batch-pause", type=float, default=0.02, help="pause between batches (s)")
    ap.add_argument("--connect-timeout", type=float, default=90.0, help="bound on opening all (s)")
    ap.add_argument("--ready-timeout", type=float, default=120.0, help="bound on /stats reaching n (s)")
    ap.add_argument("--deliver-timeout", type=float, default=60.0, help="bound on delivery after the PUT (s)")
    ap.add_argument("--settle", type=float, default=1.0, help="pause before RSS samples (s)")
    ap.add_argument("--keep-open", action="store_true",
                    help="keep each connection open after its answer (keep-alive long-poll clients); "
                         "default: close it at once")
    ap.add_argument("--json-out", default=None, help="append the result as one JSON line")
    args = ap.parse_args()
    loopback_only(args.base)
    OneShot.keep_open = args.keep_open

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if not 1 <= args.n <= 20000:
        sys.exit("bounded: 1 <= n <= 20000")
    if soft != resource.RLIM_INFINITY and args.n + 100 > soft:
        sys.exit(f"n={args.n} needs more fds than RLIMIT_NOFILE={soft} allows")
    if args.batch < 1 or args.batch_pause < 0:
        sys.exit("batch must be >= 1 and batch-pause >= 0")
    # hard stop, whatever happens
    signal.alarm(int(args.connect_timeout + args.ready_timeout + args.deliver_timeout + 2 * args.settle + 90))
    try:
        res = asyncio.run(run(args))
    except (OSError, RuntimeError, asyncio.TimeoutError, ValueError, KeyError) as e:
        print(f"fanout: setup failed: {e!r}", file=sys.stderr)
        print(f"RESULT fanout n={args.n} answered=0 failed=setup")
        return 1
    print(json.dumps(res), file=sys.stderr)
    print(result_line(res), flush=True)
    if args.json_out:
        with open(args.json_out, "a") as f:
            f.write(json.dumps(res) + "\n")
    return 0 if res.get("answered") == args.n else 2


if __name__ == "__main__":
    sys.exit(main())
