// The `cairn` executable: dispatches to `serve` or to a client subcommand.
#include <iostream>
#include <string>
#include <vector>

#include "app/serve_command.h"
#include "app/serve_settings.h"
#include "cli/client_commands.h"

namespace {

void PrintUsage(std::ostream& out) {
  out << "Usage: cairn <command> [options]\n\n"
         "  serve        run the server (cairn serve --help lists every setting)\n"
         "  config-doc   print the settings table as Markdown (docs/config.md)\n"
         "  version      print the version\n\n"
      << cairn::cli::ClientUsage();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintUsage(args.empty() ? std::cerr : std::cout);
    return args.empty() ? 2 : 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "serve") return cairn::app::RunServe(args);
    if (command == "version" || command == "--version") {
      std::cout << "cairn 0.1.0\n";
      return 0;
    }
    if (command == "config-doc") {
      std::cout << cairn::Settings(cairn::app::ServeSettingSpecs()).MarkdownTable();
      return 0;
    }
    if (cairn::cli::IsClientCommand(command)) return cairn::cli::RunClientCommand(command, args, std::cout, std::cerr);
  } catch (const std::exception& e) {  // start-up failures that escaped as exceptions
    std::cerr << "cairn " << command << ": " << e.what() << "\n";
    return 1;
  }
  std::cerr << "cairn: unknown command '" << command << "'\n\n";
  PrintUsage(std::cerr);
  return 2;
}
