-- POST /breadcrumbs with a ~1 KiB context. Title, tags and context vary per request; the shape is
-- the one bench/raw_sqlite_baseline.cpp writes (schema bench.item.v1, tags ["bench","group:K"]).
-- BENCH_CONTEXT_BYTES (default 1024) sets the exact size of the serialized context;
-- BENCH_REQUEST_BUDGET, if set, is how many requests each thread sends before it stops (the load
-- phase of bench/run.sh uses it to reach an exact record count).
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "common.lua")

local context_bytes = tonumber(os.getenv("BENCH_CONTEXT_BYTES") or "1024")
local alphabet = "abcdefghijklmnopqrstuvwxyz "
local pad_source = string.rep(alphabet, math.floor(context_bytes / #alphabet) + 2)
local headers = { ["Content-Type"] = "application/json" }
local counter = 0
local run = os.getenv("BENCH_RUN_ID") or tostring(os.time())
local budget = tonumber(os.getenv("BENCH_REQUEST_BUDGET") or "0")
local sent = -1  -- wrk calls request() once, unsent, to check the script

function request()
  counter = counter + 1
  sent = sent + 1
  if budget > 0 and sent >= budget and wrk.thread then wrk.thread:stop() end
  local seq = string.format("%d", (tid or 0) * 1000000000 + counter)
  local head = '{"seq":' .. seq ..
    ',"kind":"observation","source":"bench","attrs":{"a":1,"b":"two","c":[1,2,3]},"text":"'
  local tail = '"}'
  local pad = context_bytes - #head - #tail
  local offset = counter % #alphabet + 1
  local context = head .. pad_source:sub(offset, offset + pad - 1) .. tail
  local body = '{"schema_name":"bench.item.v1","title":"bench crumb ' .. run .. '-' .. seq ..
    '","tags":["bench","group:' .. (counter % 100) .. '"],"context":' .. context .. '}'
  return wrk.format("POST", "/breadcrumbs", headers, body)
end
