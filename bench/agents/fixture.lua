-- POST <url> with the body in the file named by the first script argument: the fixture LLM server's
-- own capacity and latency (bench/agents/run.sh), e.g.
--   wrk -t2 -c32 -d5s --latency -s bench/agents/fixture.lua http://127.0.0.1:PORT/v1/chat/completions -- body.json
-- Prints the bench_*= lines of ../wrk/common.lua after wrk's report.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "../wrk/common.lua")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function init(args)
  local file = assert(io.open(assert(args[1], "usage: wrk ... -s fixture.lua URL -- BODY_FILE"), "rb"))
  wrk.body = file:read("*a")
  file:close()
end
