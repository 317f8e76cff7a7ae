-- GET /breadcrumbs/{id} over ids created beforehand, round-robin. The threads start evenly spaced
-- around the list ($BENCH_WRK_THREADS tells how many there are), so no thread re-reads an id
-- another read shortly before: with more ids than the server's read cache holds, every read misses.
-- The ids file (one id per line) is the first script argument (`wrk ... -- FILE`) or $BENCH_IDS_FILE.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "common.lua")

local requests = {}
local next_index = 1

function init(args)
  local path = args[1] or os.getenv("BENCH_IDS_FILE")
  if not path then error("get_breadcrumb.lua: pass the ids file: wrk ... -- FILE") end
  local file = assert(io.open(path, "r"))
  for line in file:lines() do
    local id = line:match("^%s*(%S+)%s*$")
    if id then requests[#requests + 1] = wrk.format("GET", "/breadcrumbs/" .. id) end
  end
  file:close()
  if #requests == 0 then error("get_breadcrumb.lua: no ids in " .. path) end
  local threads = tonumber(os.getenv("BENCH_WRK_THREADS") or "1")
  next_index = math.floor((tid or 0) * #requests / threads) % #requests + 1
end

function request()
  local r = requests[next_index]
  next_index = next_index % #requests + 1
  return r
end
