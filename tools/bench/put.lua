-- wrk script: single-row writes, PUT /v1/tables/bench/rows/{id}, one NEW row per request.
--
-- Measures request rate and latency of the gateway's single-row write path (each
-- request is one durable commit unless the gateway groups commits).
-- Row ids are unique per run: "p<runtag>-<thread>-<counter>", so every request is an insert.
--
--   DALLY_TOKEN=bench-client-token-0123456789 \
--     wrk -t2 -c64 -d10s -s tools/bench/put.lua http://127.0.0.1:18080
--
-- Env: DALLY_TOKEN  bearer token (default: the bench config's client token)
--      BENCH_TABLE  table name (default "bench")
--      BENCH_CHECK=1  also read every response body and count bodies that do not look
--                     like a saved row (costs some client CPU; off by default)
-- Prints: RESULT put rps=.. p50_ms=.. p90_ms=.. p99_ms=.. max_ms=.. non2xx=.. ...
local dir = debug.getinfo(1, "S").source:sub(2):match("^(.*/)") or "./"
dofile(dir .. "wrk_report.lua")

local token = os.getenv("DALLY_TOKEN") or "bench-client-token-0123456789"
local tbl = os.getenv("BENCH_TABLE") or "bench"
local check = os.getenv("BENCH_CHECK") == "1"

local threads = writer_setup("PUT", token)

-- worker threads (tid/runtag arrive through thread:set before init runs)
local n = 0
bad_bodies = 0
request = function()
  n = n + 1
  local id = string.format("p%s-%d-%d", runtag, tid, n)
  local body = string.format(
    '{"values":{"name":"item %s","qty":%d,"price":1.5,"paid":true}}', id, n % 1000)
  return wrk.format(nil, "/v1/tables/" .. tbl .. "/rows/" .. id, nil, body)
end

if check then
  response = function(status, headers, body)
    if status == 200 and not body:find('"seq":', 1, true) then bad_bodies = bad_bodies + 1 end
  end
end

done = function(summary, latency, requests)
  local extra = {}
  if check then
    local bad = 0
    for _, t in ipairs(threads) do bad = bad + (t:get("bad_bodies") or 0) end
    extra[#extra + 1] = "bad_bodies=" .. bad
  end
  report("put", summary, latency, extra)
end
