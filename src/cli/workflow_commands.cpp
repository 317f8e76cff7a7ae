// run: starts a workflow run (POST /workflows/{name}/runs) and prints its execution id, or with
// --wait waits for its workflow.result.v1 and prints the output (exit 1 when the run failed).
//
// With --wait the event stream (workflow results of this workflow) is opened before the run is
// started, so a result however fast cannot be missed; the run's request_id, which the server
// chooses, picks the one result that answers it.
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "cli/answer_stream.h"
#include "base/json_util.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/url_util.h"
#include "model/reserved.h"

namespace cairn::cli {
namespace json = boost::json;
CommandSpec RunSpec() {
  return {"run",
          "start a workflow run; with --wait, wait for its result and print the output (exit 1 if it failed)",
          "WORKFLOW [--input JSON] [--wait [--wait-seconds SECONDS]]",
          {{"input", "JSON", "the run's input (default {})"},
           {"wait", "", "wait for the result and print its output"},
           {"wait-seconds", "SECONDS", "with --wait: wait at most SECONDS (1 to 86400, default 300)"},
           {"full", "", "with --wait: print the whole workflow.result.v1 context"}},
          "WORKFLOW",
          1,
          1};
}

int RunRun(CommandRun& run) {
  const std::string& workflow = run.args().positionals()[0];
  auto input = InputOption(run);
  if (!input.ok()) return run.UsageError(input.status().message());
  json::object started;
  auto start = [&]() -> Status {
    auto reply = run.api().Call("POST", "/workflows/" + PercentEncode(workflow) + "/runs",
                                json::value(json::object{{"input", *input}}));
    if (!reply.ok()) return reply.status();
    if (reply->body.is_object()) started = reply->body.as_object();
    return Status::Ok();
  };
  if (!run.args().Has("wait")) {
    if (Status s = start(); !s.ok()) return run.Failure(s);
    return run.PrintJson(started);
  }
  auto wait_seconds = WaitSeconds(run, "wait-seconds", 300);
  if (!wait_seconds.ok()) return run.UsageError(wait_seconds.status().message());
  QueryString query;
  query.Add("schema_name", std::string(model::kWorkflowResultSchema));
  query.Add("tag", "workflow:" + workflow);
  AnswerWait wait;
  wait.stream_query = query.Build();
  wait.wait_seconds = *wait_seconds;
  wait.write = start;
  wait.match = [&](const json::object& result) { return StringMember(result, "request_id") == StringMember(started, "request_id"); };
  auto answer = AwaitAnswer(run, wait);
  if (!answer.ok()) return run.Failure(answer.status());
  if (!answer->answer) {
    if (answer->interrupted) return kExitFailure;
    return run.Failure(Status::Unavailable("no result from " + workflow + " within " + std::to_string(*wait_seconds) +
                                           " s (execution " + StringMember(started, "execution_id") + "; it may still end)"));
  }
  return ReportAnswer(run, *answer->answer, "run", workflow);
}

}  // namespace cairn::cli
