#include "exec/mcp/stdio_transport.h"

#include <boost/json/serialize.hpp>

#include "base/json_util.h"
#include "base/log.h"

namespace cairn::exec::mcp {
namespace json = boost::json;

namespace {
constexpr size_t kMaxJsonDepth = 64;
}

StdioTransport::StdioTransport(ProcessSpec spec, size_t max_message_bytes)
    : spec_(std::move(spec)), max_message_bytes_(max_message_bytes) {}

StdioTransport::~StdioTransport() { Close(); }

Status StdioTransport::Open(OnMessage on_message, OnClosed on_closed) {
  CAIRN_ASSIGN_OR_RETURN(process_, LiveProcess::Start(spec_));
  reader_ = std::thread([this, on_message = std::move(on_message), on_closed = std::move(on_closed)] {
    ReadLoop(on_message, on_closed);
  });
  return Status::Ok();
}

void StdioTransport::ReadLoop(OnMessage on_message, OnClosed on_closed) {
  while (true) {
    auto line = process_->ReadLine(max_message_bytes_);
    if (!line.ok()) {
      CAIRN_LOG_WARN("MCP server {}: {}", spec_.argv.front(), line.status().message());
      continue;
    }
    if (!line->has_value()) break;
    const std::string& text = **line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto parsed = ParseJson(text, kMaxJsonDepth);
    if (!parsed.ok()) {
      CAIRN_LOG_WARN("MCP server {} wrote a line that is not JSON: {}", spec_.argv.front(), parsed.status().message());
      continue;
    }
    on_message(std::move(parsed).value());
  }
  if (!closing_.load()) {
    std::string tail = process_->StderrTail();
    if (tail.size() > 500) tail = "..." + tail.substr(tail.size() - 500);
    on_closed("the server process ended" + (tail.empty() ? std::string() : "; stderr: " + tail));
  }
}

Status StdioTransport::Send(const json::value& message, std::chrono::milliseconds timeout, const std::atomic<bool>*) {
  if (!process_) return Status::Unavailable("the MCP server is not started");
  return process_->Write(json::serialize(message) + "\n", timeout);
}

void StdioTransport::Close() {
  closing_.store(true);
  if (process_) process_->Stop();
  if (reader_.joinable()) reader_.join();
  process_.reset();
}

std::string StdioTransport::Diagnostics() const { return process_ ? process_->StderrTail() : ""; }

}  // namespace cairn::exec::mcp
