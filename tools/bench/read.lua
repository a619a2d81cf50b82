-- wrk script: the read path. GET /v1/tables/bench/rows?since=0&limit=READ_LIMIT, the same
-- page each time: rows read from SQLite and written as JSON (run.sh seeds READ_LIMIT rows
-- before it runs).
--
--   DALLY_TOKEN=bench-client-token-0123456789 READ_LIMIT=1000 \
--     wrk -t2 -c4 -d10s -s tools/bench/read.lua http://127.0.0.1:18080
--
-- Env: DALLY_TOKEN  bearer token (default: the bench config's client token)
--      BENCH_TABLE  table name (default "bench")   READ_LIMIT  rows a page (default 1000)
--      READ_WHERE   a where= filter, e.g. "price:2.5" (default none: the unfiltered page)
-- Prints: RESULT read rps=.. p50_ms=.. ... rows_per_request=.. rows_per_s=..
local dir = debug.getinfo(1, "S").source:sub(2):match("^(.*/)") or "./"
dofile(dir .. "wrk_report.lua")

local token = os.getenv("DALLY_TOKEN") or "bench-client-token-0123456789"
local tbl = os.getenv("BENCH_TABLE") or "bench"
local limit = tonumber(os.getenv("READ_LIMIT") or "1000")

wrk.method = "GET"
wrk.path = string.format("/v1/tables/%s/rows?since=0&limit=%d", tbl, limit)
local where = os.getenv("READ_WHERE")
if where and where ~= "" then wrk.path = wrk.path .. "&where=" .. where end
wrk.headers["Authorization"] = "Bearer " .. token

done = function(summary, latency, requests)
  local rps = summary.requests / (summary.duration / 1e6)
  report("read", summary, latency, {
    "rows_per_request=" .. limit,
    string.format("rows_per_s=%.0f", rps * limit),
  })
end
