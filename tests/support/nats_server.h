// NatsServer: a real, throwaway nats-server with JetStream for the tests of the NATS event stream.
//
//   auto nats = NatsServer::Start();
//   ASSERT_TRUE(nats.ok()) << nats.status().ToString();   // missing binary: the test fails, says why
//   ... --bus (*nats)->url() ...
//   ASSERT_TRUE((*nats)->Restart().ok());                 // same port, same stored stream
//
// `nats-server -js` on 127.0.0.1 and a port the kernel picks, its JetStream storage in a temporary
// directory removed with the object. Start and Restart return once the server's log says it is
// ready (no fixed sleeps). The server dies with the test process (PR_SET_PDEATHSIG).
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace cairn::test_support {

class NatsServer {
 public:
  static Result<std::unique_ptr<NatsServer>> Start();
  ~NatsServer();

  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // Stops the server (SIGTERM, waiting for it to exit) and starts it again on the same port.
  // Connections are broken meanwhile; the stream and its messages are kept, unless
  // `lose_storage`: then the server comes back without them (a server whose disk was lost).
  Status Restart(bool lose_storage = false);
  // The two halves of Restart: NATS unreachable between them.
  Status Stop();
  Status StartAgain(bool lose_storage = false);
  // The server's log so far (for failure messages).
  std::string Log() const;

 private:
  NatsServer() : dir_("cairn-nats") {}
  // Starts the process on `port` (0: any) and reads the port from its log.
  Status Launch(int port);

  TempDir dir_;
  std::unique_ptr<Subprocess> process_;
  std::string earlier_log_;  // of the processes before a restart
  int port_ = 0;
};

}  // namespace cairn::test_support
