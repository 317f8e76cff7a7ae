#include "cli/client_commands.h"

#include <algorithm>
#include <iostream>
#include <memory>

#include "base/clock.h"
#include "cli/client_context.h"
#include "cli/commands.h"
#include "cli/curl_http_client.h"
#include "cli/stop_signal.h"

namespace cairn::cli {

namespace {

struct CommandEntry {
  std::string_view name;
  CommandSpec (*spec)();
  int (*run)(CommandRun&);
};

// Listed in the order the usage shows them.
constexpr CommandEntry kCommands[] = {
    {"put", &PutSpec, &RunPut},          {"get", &GetSpec, &RunGet},   {"list", &ListSpec, &RunList},
    {"search", &SearchSpec, &RunSearch},
    {"update", &UpdateSpec, &RunUpdate}, {"rm", &RmSpec, &RunRm},       {"history", &HistorySpec, &RunHistory},
    {"tail", &TailSpec, &RunTail},       {"tools", &ToolsSpec, &RunTools}, {"call", &CallSpec, &RunCall},
    {"chat", &ChatSpec, &RunChat},       {"run", &RunSpec, &RunRun},   {"mcp", &McpSpec, &RunMcp},
};

const CommandEntry* Find(std::string_view command) {
  for (const auto& entry : kCommands) {
    if (entry.name == command) return &entry;
  }
  return nullptr;
}

}  // namespace

bool IsClientCommand(std::string_view command) { return Find(command) != nullptr; }

int RunClientCommandIn(std::string_view command, const std::vector<std::string>& args, ClientContext& context) {
  const CommandEntry* entry = Find(command);
  if (entry == nullptr) {
    context.err << "cairn: '" << command << "' is not a client command\n\n" << ClientUsage();
    return kExitUsage;
  }
  const CommandSpec spec = entry->spec();
  int exit_code = kExitOk;
  auto run = CommandRun::Start(spec, args, context, &exit_code);
  if (run == nullptr) return exit_code;
  return entry->run(*run);
}

int RunClientCommand(std::string_view command, const std::vector<std::string>& args, std::ostream& out,
                     std::ostream& err) {
  ClientContext context{
      std::cin,
      out,
      err,
      [](const char* name) -> const char* { return std::getenv(name); },
      [](const CurlOptions& options) -> std::unique_ptr<HttpClient> {
        return std::make_unique<CurlHttpClient>(options);
      },
      [] { return SystemClock::Instance().NowMicros(); },
      [](const CurlOptions& options) -> std::unique_ptr<StreamingHttpClient> {
        return std::make_unique<CurlStreamClient>(options);
      },
      []() -> std::unique_ptr<StopSignal> { return std::make_unique<SignalStop>(); },
  };
  const int exit_code = RunClientCommandIn(command, args, context);
  out.flush();
  return exit_code;
}

std::string ClientUsage() {
  std::string out = "client commands (talk to a running `cairn serve`):\n";
  size_t width = 0;
  for (const auto& entry : kCommands) width = std::max(width, entry.name.size() + 1 + entry.spec().synopsis.size());
  for (const auto& entry : kCommands) {
    const CommandSpec spec = entry.spec();
    std::string left = std::string(entry.name) + " " + spec.synopsis;
    out += "  cairn " + left;
    out.append(width - left.size() + 2, ' ');
    out += spec.summary + "\n";
  }
  out += "common options: --server URL (default $" + std::string(kServerEnvVar) + ", else " +
         std::string(kDefaultServer) + "), --actor NAME, --timeout SECONDS, --compact, --help\n";
  out += "exit status: 0 success, 1 server or network error, 2 usage error\n";
  out += "`cairn <command> --help` shows a command's options.\n";
  return out;
}

}  // namespace cairn::cli
