#include "support/nats_server.h"

#include <chrono>
#include <filesystem>
#include <regex>

namespace cairn::test_support {
namespace {

using namespace std::chrono_literals;

constexpr const char* kReadyLine = "Server is ready";

}  // namespace

Result<std::unique_ptr<NatsServer>> NatsServer::Start() {
  std::unique_ptr<NatsServer> server(new NatsServer());
  if (!server->dir_.ok()) return Status::Internal("nats-server: " + server->dir_.error());
  CAIRN_RETURN_IF_ERROR(server->Launch(0));
  return server;
}

NatsServer::~NatsServer() {
  if (process_ && process_->running()) {
    process_->Kill(15);
    process_->Wait(10s);
  }
}

Status NatsServer::Launch(int port) {
  std::string port_arg = port == 0 ? "-1" : std::to_string(port);  // -1: any free port
  process_ = std::make_unique<Subprocess>(std::vector<std::string>{
      "nats-server", "-a", "127.0.0.1", "-p", port_arg, "-js", "-sd", dir_.Join("jetstream")});
  if (!process_->Start()) return Status::Internal("nats-server cannot start: " + process_->error());
  if (!process_->WaitForErr(kReadyLine, 20s)) {
    return Status::Internal("nats-server did not become ready (is Debian's nats-server installed? scripts/install-deps "
                            "test): " + process_->err());
  }
  std::smatch found;
  const std::string& log = process_->err();
  static const std::regex listening("Listening for client connections on [0-9.]+:([0-9]+)");
  if (!std::regex_search(log, found, listening)) return Status::Internal("nats-server: no client port in its log: " + log);
  port_ = std::stoi(found[1].str());
  return Status::Ok();
}

Status NatsServer::Stop() {
  if (!process_) return Status::Ok();
  process_->Kill(15);
  if (process_->Wait(20s) < 0) return Status::Internal("nats-server did not stop: " + process_->err());
  earlier_log_ += process_->err();
  process_.reset();
  return Status::Ok();
}

Status NatsServer::StartAgain(bool lose_storage) {
  if (lose_storage) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_.Join("jetstream"), ignored);
  }
  return Launch(port_);
}

Status NatsServer::Restart(bool lose_storage) {
  CAIRN_RETURN_IF_ERROR(Stop());
  return StartAgain(lose_storage);
}

std::string NatsServer::Log() const { return earlier_log_ + (process_ ? process_->err() : std::string()); }

}  // namespace cairn::test_support
