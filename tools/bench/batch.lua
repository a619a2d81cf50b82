-- wrk script: batch writes, POST /v1/tables/bench/batch with N new rows per request.
--
-- Measures rows/s through the batch endpoint (one request = one transaction of N rows)
-- and the latency of one batch. Ids are unique per run: "b<runtag>-<thread>-<req>-<i>".
-- Every response body is read: rows listed in "saved" are counted, and a response whose
-- "errors" array is not empty counts in error_responses.
--
--   BATCH_ROWS=1000 DALLY_TOKEN=bench-client-token-0123456789 \
--     wrk -t2 -c4 -d10s --timeout 30s -s tools/bench/batch.lua http://127.0.0.1:18080
--
-- Env: BATCH_ROWS   rows per request (default 1000)
--      DALLY_TOKEN  bearer token (default: the bench config's client token)
--      BENCH_TABLE  table name (default "bench")
-- Prints: RESULT batch rps=.. rows_per_s=.. saved_rows_per_s=.. p50_ms=.. p99_ms=.. ...
--   rows_per_s       = rows sent in requests that completed without a non-2xx status / s
--   saved_rows_per_s = ids the gateway listed in "saved" / s (the number to trust)
local dir = debug.getinfo(1, "S").source:sub(2):match("^(.*/)") or "./"
dofile(dir .. "wrk_report.lua")

local token = os.getenv("DALLY_TOKEN") or "bench-client-token-0123456789"
local tbl = os.getenv("BENCH_TABLE") or "bench"
local rows = tonumber(os.getenv("BATCH_ROWS") or "1000")

local threads = writer_setup("POST", token)

local n = 0
saved_rows = 0
error_responses = 0
request = function()
  n = n + 1
  local items = {}
  for i = 1, rows do
    items[i] = string.format(
      '{"id":"b%s-%d-%d-%d","values":{"name":"item %d","qty":%d,"price":1.5,"paid":true}}',
      runtag, tid, n, i, i, i)
  end
  local body = '{"created":[' .. table.concat(items, ",") .. '],"updated":[],"deleted":[]}'
  return wrk.format(nil, "/v1/tables/" .. tbl .. "/batch", nil, body)
end

response = function(status, headers, body)
  if status ~= 200 then return end
  local saved = body:match('"saved"%s*:%s*%[(.-)%]')
  if saved and saved:find("%S") then
    local _, commas = saved:gsub(",", "")
    saved_rows = saved_rows + commas + 1
  end
  local errs = body:match('"errors"%s*:%s*%[(.-)%]')
  if errs == nil or errs:find("%S") then error_responses = error_responses + 1 end
end

done = function(summary, latency, requests)
  local dur_s = summary.duration / 1e6
  local saved, errs = 0, 0
  for _, t in ipairs(threads) do
    saved = saved + (t:get("saved_rows") or 0)
    errs = errs + (t:get("error_responses") or 0)
  end
  local ok_reqs = summary.requests - summary.errors.status
  report("batch", summary, latency, {
    "rows_per_request=" .. rows,
    string.format("rows_per_s=%.1f", ok_reqs * rows / dur_s),
    string.format("saved_rows_per_s=%.1f", saved / dur_s),
    "saved_rows=" .. saved,
    "error_responses=" .. errs,
  })
end
