// Starting a workflow run from the API (POST /workflows/{name}/runs, `cairn run`): the run is a
// workflow.request.v1 written for the workflow, which its executor answers exactly once like any
// request (docs/workflows.md "Runs"). The execution id is known at once: it is derived from the
// executor and the request, as for every bus-triggered run.
#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "base/status.h"
#include "model/limits.h"
#include "store/store.h"

namespace cairn::exec {

struct StartedWorkflowRun {
  std::string execution_id;
  std::string request_id;
  std::string workflow;
};

// Checks that workflow `name` exists in `ctx.owner_id` and that `input` satisfies its
// input_schema (kValidation naming "input..." otherwise), then writes the request as
// `ctx.actor`. kNotFound when there is no such workflow.
Result<StartedWorkflowRun> StartWorkflowRun(store::Store& store, const model::WriteContext& ctx, const std::string& name,
                                            const boost::json::value& input, const model::Limits& limits);

}  // namespace cairn::exec
