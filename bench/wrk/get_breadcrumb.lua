-- GET /breadcrumbs/{id} over ids created beforehand, round-robin; each thread starts at a different
-- offset. The ids file (one id per line) is the first script argument (`wrk ... -- FILE`) or
-- $BENCH_IDS_FILE.
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
  next_index = ((tid or 0) * 7919) % #requests + 1
end

function request()
  local r = requests[next_index]
  next_index = next_index % #requests + 1
  return r
end
