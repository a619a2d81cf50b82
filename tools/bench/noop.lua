-- wrk script: the "no-op route" ceiling. Plain GET of the URL given to wrk
-- (use .../healthz); it only adds the parseable RESULT line of wrk_report.lua.
--
--   wrk -t2 -c64 -d10s -s tools/bench/noop.lua http://127.0.0.1:18080/healthz
--
-- Prints: RESULT noop rps=.. p50_ms=.. p90_ms=.. p99_ms=.. max_ms=.. non2xx=.. ...
local dir = debug.getinfo(1, "S").source:sub(2):match("^(.*/)") or "./"
dofile(dir .. "wrk_report.lua")

done = function(summary, latency, requests)
  report(os.getenv("BENCH_KIND") or "noop", summary, latency)
end
