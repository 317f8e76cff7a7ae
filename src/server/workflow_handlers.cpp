#include "server/workflow_handlers.h"

#include <boost/json/serialize.hpp>

#include "exec/workflows/workflow_runs.h"
#include "server/request_support.h"

namespace cairn::server {
namespace json = boost::json;

void AddWorkflowRoutes(Router& router, store::Store& store, const model::Limits& limits) {
  router.Add("POST", "/workflows/{name}/runs", Dispatch::kWorker, [&store, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    json::value input = json::object();
    if (!req.body.empty()) {
      CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
      if (!body.is_object()) return Status::Validation("body", "must be a JSON object {\"input\": ...}");
      for (const auto& [key, value] : body.as_object()) {
        if (key != "input") return Status::Validation(std::string(key), "unknown field (input)");
        input = value;
      }
    }
    CAIRN_ASSIGN_OR_RETURN(exec::StartedWorkflowRun run,
                           exec::StartWorkflowRun(store, ctx, req.path_params[0], input, limits));
    json::object view{{"execution_id", run.execution_id}, {"request_id", run.request_id}, {"workflow", run.workflow}};
    HttpResponse response = HttpResponse::Json(202, json::serialize(view));
    response.headers.emplace_back("Location", "/executions/" + run.execution_id);
    return response;
  });
}

}  // namespace cairn::server
