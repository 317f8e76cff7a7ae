// Routes of workflows (docs/workflows.md, docs/api.md): starting a run. Definitions are
// workflow.def.v1 breadcrumbs (POST /breadcrumbs), runs are executions (GET /executions/{id}).
#pragma once

#include "model/limits.h"
#include "server/router.h"
#include "store/store.h"

namespace cairn::server {

// POST /workflows/{name}/runs {"input": <JSON>} -> 202 {execution_id, request_id, workflow}:
// 404 for an unknown workflow, 422 naming the field ("input.city") when the input does not
// satisfy the workflow's input_schema, 400 for any other field.
void AddWorkflowRoutes(Router& router, store::Store& store, const model::Limits& limits);

}  // namespace cairn::server
