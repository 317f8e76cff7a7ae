#include "store/postgres/pg_notifier.h"

#include <poll.h>
#include <unistd.h>

#include "base/log.h"
#include "base/thread_name.h"

namespace cairn::store::postgres {

PgCommitNotifier::PgCommitNotifier(std::string uri, std::function<int()> own_backend_pid,
                                   std::function<void()> on_commit)
    : uri_(std::move(uri)), own_backend_pid_(std::move(own_backend_pid)), on_commit_(std::move(on_commit)) {
  if (pipe(wake_pipe_) != 0) wake_pipe_[0] = wake_pipe_[1] = -1;
}

PgCommitNotifier::~PgCommitNotifier() {
  Stop();
  for (int fd : wake_pipe_) {
    if (fd >= 0) close(fd);
  }
}

void PgCommitNotifier::Start() {
  thread_ = std::thread([this] {
    NameThisThread("pg-notify");
    Run();
  });
}

void PgCommitNotifier::Stop() {
  if (stopping_.exchange(true)) return;
  if (wake_pipe_[1] >= 0) (void)!write(wake_pipe_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
}

void PgCommitNotifier::Run() {
  while (!stopping_) {
    auto conn = PgConnection::Open(uri_);
    if (conn.ok() && (*conn)->Exec(std::string("LISTEN ") + kEventsChannel).ok()) {
      // Commits made while no connection listened (before the first one did, too: Start returns
      // before it does) are read from the log.
      on_commit_();
      if (!Listen(**conn)) return;
      CAIRN_LOG_WARN("store: the PostgreSQL connection that listens for other processes' commits broke; reconnecting");
    }
    pollfd wake{wake_pipe_[0], POLLIN, 0};
    if (poll(&wake, 1, 1000) > 0) return;  // stopped
  }
}

bool PgCommitNotifier::Listen(PgConnection& conn) {
  PGconn* raw = conn.raw();
  while (!stopping_) {
    pollfd fds[2] = {{PQsocket(raw), POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;  // EINTR
    if (fds[1].revents != 0) return false;
    if (PQconsumeInput(raw) == 0) return true;  // broken
    bool elsewhere = false;
    while (PGnotify* note = PQnotifies(raw)) {
      elsewhere = elsewhere || note->be_pid != own_backend_pid_();
      PQfreemem(note);
    }
    if (elsewhere) on_commit_();
  }
  return false;
}

}  // namespace cairn::store::postgres
