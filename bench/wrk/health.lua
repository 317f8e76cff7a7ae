-- GET /health: the HTTP floor (Beast, routing, a tiny JSON reply; no store access).
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "common.lua")

wrk.method = "GET"
wrk.path = "/health"
