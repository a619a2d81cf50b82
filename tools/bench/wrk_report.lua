-- Shared done() reporting for the Dally wrk scripts (put.lua, batch.lua, noop.lua).
--
-- Loaded with dofile() by those scripts; it is not a wrk script by itself. It defines
--   report(kind, summary, latency, extra)
-- which prints ONE parseable line to stdout:
--   RESULT <kind> rps=.. p50_ms=.. p90_ms=.. p99_ms=.. max_ms=.. mean_ms=.. requests=..
--          non2xx=.. sock_errors=.. duration_s=.. [extra key=value ...]
-- non2xx is wrk's summary.errors.status (responses with status >= 400 — wrk does not
-- count 3xx); sock_errors = connect+read+write+timeout errors.

local function ms(us) return string.format("%.2f", us / 1000.0) end

function report(kind, summary, latency, extra)
  local dur_s = summary.duration / 1e6
  local e = summary.errors
  local parts = {
    "RESULT " .. kind,
    string.format("rps=%.1f", summary.requests / dur_s),
    "p50_ms=" .. ms(latency:percentile(50)),
    "p90_ms=" .. ms(latency:percentile(90)),
    "p99_ms=" .. ms(latency:percentile(99)),
    "max_ms=" .. ms(latency.max),
    "mean_ms=" .. ms(latency.mean),
    "requests=" .. summary.requests,
    "non2xx=" .. e.status,
    "sock_errors=" .. (e.connect + e.read + e.write + e.timeout),
    string.format("duration_s=%.2f", dur_s),
  }
  for _, kv in ipairs(extra or {}) do parts[#parts + 1] = kv end
  io.write(table.concat(parts, " ") .. "\n")
  io.flush()
end

-- Shared set-up of the write scripts (put.lua, batch.lua): method, JSON and bearer headers,
-- and a per-thread number plus a per-run tag for unique row ids. BENCH_RUNTAG (run.sh sets
-- one) keeps ids unique across runs on the same data dir. Defines the global setup() and
-- returns the table of threads, for done() to collect per-thread counters.
function writer_setup(method, token)
  wrk.method = method
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. token
  local threads = {}
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  local run_tag = os.getenv("BENCH_RUNTAG") or string.format("%x%04x", os.time(), math.random(0, 0xffff))
  setup = function(thread)
    thread:set("tid", #threads + 1)
    thread:set("runtag", run_tag)
    table.insert(threads, thread)
  end
  return threads
end
