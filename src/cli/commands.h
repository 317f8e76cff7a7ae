// The client subcommands: their command-line specs and their bodies. Each Run* gets a
// started CommandRun (command line parsed, server chosen) and returns the process exit code.
#pragma once

#include <string_view>

#include "cli/command_support.h"

namespace cairn::cli {

CommandSpec PutSpec();
CommandSpec GetSpec();
CommandSpec ListSpec();
CommandSpec UpdateSpec();
CommandSpec RmSpec();
CommandSpec HistorySpec();
CommandSpec TailSpec();
CommandSpec ToolsSpec();
CommandSpec CallSpec();
CommandSpec ChatSpec();
CommandSpec SearchSpec();
CommandSpec RunSpec();
CommandSpec McpSpec();

int RunPut(CommandRun& run);      // write_commands.cpp
int RunUpdate(CommandRun& run);   // write_commands.cpp
int RunRm(CommandRun& run);       // write_commands.cpp
int RunGet(CommandRun& run);      // read_commands.cpp
int RunList(CommandRun& run);     // read_commands.cpp
int RunHistory(CommandRun& run);  // read_commands.cpp
int RunTail(CommandRun& run);     // tail_command.cpp
int RunTools(CommandRun& run);    // tool_commands.cpp
int RunCall(CommandRun& run);     // tool_commands.cpp
int RunChat(CommandRun& run);     // chat_command.cpp
int RunSearch(CommandRun& run);   // search_command.cpp
int RunRun(CommandRun& run);      // workflow_commands.cpp
int RunMcp(CommandRun& run);      // mcp_command.cpp

// kInvalidArgument for an empty id: "/breadcrumbs/" would silently address the list route.
Status CheckId(std::string_view id);

}  // namespace cairn::cli
