#include "server/http_server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/thread_name.h"
#include "server/http_session.h"
#include "server/server_context.h"

namespace cairn::server {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
namespace {

// After a failed accept the listener waits this long before the next one (see AcceptFailed).
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);
// At most one log line per interval about failed accepts.
constexpr auto kAcceptLogInterval = std::chrono::seconds(10);
// Descriptors the listener keeps back while it accepts (see DescriptorReserve).
constexpr size_t kReservedDescriptors = 16;
// A worker thread started for a burst of requests ends after this long idle.
constexpr auto kIdleWorkerExit = std::chrono::seconds(10);

// File descriptors held back from accepting, so that accepts never take the last ones: when they
// run out, the server still needs some for its own work (SQLite's temporary files, outgoing
// webhook and LLM connections, a log line). The listener holds the reserve while it accepts;
// when an accept fails it releases it (that headroom goes to the rest of the process), and it
// accepts again only once it could take the whole reserve back, i.e. once connections closed.
// Used by Listen() before the server runs, then on the acceptor's thread only.
class DescriptorReserve {
 public:
  ~DescriptorReserve() { Release(); }

  // Takes up to `size` descriptors; the reserve is what it could take (all of them unless the
  // open-file limit is tiny).
  void Init(size_t size) {
    size_ = size;
    (void)Acquire();
    size_ = fds_.size();
  }
  size_t size() const { return size_; }

  // Takes the whole reserve back, or says why it could not (what it took is kept).
  std::error_code Acquire() {
    while (fds_.size() < size_) {
      int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) return std::error_code(errno, std::generic_category());
      fds_.push_back(fd);
    }
    return {};
  }

  void Release() {
    for (int fd : fds_) ::close(fd);
    fds_.clear();
  }

 private:
  size_t size_ = 0;
  std::vector<int> fds_;
};

std::vector<std::unique_ptr<asio::io_context>> MakeIoContexts(int io_threads) {
  int count = io_threads > 0 ? io_threads : static_cast<int>(std::thread::hardware_concurrency());
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  for (int i = 0; i < std::max(count, 1); ++i) contexts.push_back(std::make_unique<asio::io_context>(1));
  return contexts;
}

std::vector<std::shared_ptr<std::atomic<int64_t>>> MakeCounters(size_t count) {
  std::vector<std::shared_ptr<std::atomic<int64_t>>> counters;
  for (size_t i = 0; i < count; ++i) counters.push_back(std::make_shared<std::atomic<int64_t>>(0));
  return counters;
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, const Router& router, MetricsRegistry& metrics, bus::EventBus* bus,
       bus::EphemeralHub* ephemeral)
      : options_(std::move(options)),
        io_contexts_(MakeIoContexts(options_.io_threads)),
        io_connections_(MakeCounters(io_contexts_.size())),
        // Started as requests need them; idle ones end, so an idle server holds none.
        workers_(0, options_.worker_threads, kIdleWorkerExit, "http-worker"),
        catch_up_(0, 2, kIdleWorkerExit, "sse-catch-up"),
        ctx_(options_, router, metrics, workers_, catch_up_, bus, ephemeral),
        acceptor_(*io_contexts_.front()),
        accept_backoff_(acceptor_.get_executor()),
        signals_(*io_contexts_.front(), SIGINT, SIGTERM) {}

  Result<uint16_t> Listen() {
    boost::system::error_code ec;
    auto address = asio::ip::make_address(options_.host, ec);
    if (ec) return Status::InvalidArgument("invalid listen address '" + options_.host + "'");
    tcp::endpoint endpoint(address, options_.port);
    if (acceptor_.open(endpoint.protocol(), ec); ec) return Status::Unavailable("socket: " + ec.message());
    acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (acceptor_.bind(endpoint, ec); ec) {
      return Status::Unavailable("cannot listen on " + options_.host + ":" + std::to_string(options_.port) + ": " +
                                 ec.message());
    }
    if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); ec) {
      return Status::Unavailable("listen: " + ec.message());
    }
    reserve_.Init(kReservedDescriptors);
    if (reserve_.size() < kReservedDescriptors) {
      CAIRN_LOG_WARN("http: only {} file descriptors could be reserved; raise the open-file limit (ulimit -n)",
                     reserve_.size());
    }
    return acceptor_.local_endpoint().port();
  }

  void Run() {
    signals_.async_wait([this](boost::system::error_code ec, int signal) {
      if (!ec) {
        CAIRN_LOG_INFO("http: signal {} received, shutting down", signal);
        Stop();
      }
    });
    Accept();
    std::vector<std::thread> io_threads;
    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> keep_running;
    for (auto& io_context : io_contexts_) {
      keep_running.push_back(asio::make_work_guard(*io_context));  // a thread with no connection yet waits
      io_threads.emplace_back([&io_context = *io_context] {
        NameThisThread("http-io");
        io_context.run();
      });
    }

    {
      std::unique_lock lock(stop_mu_);
      stop_cv_.wait(lock, [this] { return stop_requested_; });
    }
    // Stop accepting, then give in-flight requests the grace period to finish.
    asio::post(acceptor_.get_executor(), [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      accept_backoff_.cancel();
      signals_.cancel(ignored);
    });
    {
      std::unique_lock lock(ctx_.mu);
      bool drained = ctx_.drained.wait_for(lock, std::chrono::milliseconds(options_.shutdown_grace_ms),
                                           [this] { return ctx_.in_flight == 0; });
      if (!drained) CAIRN_LOG_WARN("http: {} requests still in flight after the grace period", ctx_.in_flight);
    }
    for (auto& io_context : io_contexts_) io_context->stop();
    for (auto& thread : io_threads) thread.join();
    workers_.Stop();  // runs what was handed to it, then joins
    catch_up_.Stop();
    {
      // Writes still queued answer into the stopped I/O context; their connections must not
      // outlive it. The store's writer finishes them, as the worker pool's writes above.
      std::unique_lock lock(ctx_.mu);
      ctx_.drained.wait(lock, [this] { return ctx_.async_answers == 0; });
    }
    CAIRN_LOG_INFO("http: stopped");
  }

  void Stop() {
    {
      std::lock_guard lock(stop_mu_);
      stop_requested_ = true;
    }
    ctx_.stopping = true;
    stop_cv_.notify_all();
  }

 private:
  // Runs on the acceptor's thread (the first I/O thread), as do AcceptFailed and the backoff timer.
  void Accept() {
    // The next connection goes to the I/O thread with the fewest open (event streams stay open for
    // long, so taking turns would pile them up unevenly as other connections come and go).
    const size_t next = LeastBusyIoContext();
    acceptor_.async_accept(*io_contexts_[next], [this, next](boost::system::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
      if (ec) return AcceptFailed(ec);
      if (failing_) {
        CAIRN_LOG_WARN("http: accepting connections again ({} more failed accepts since the last report)",
                       failed_accepts_);
        failed_accepts_ = 0;
        failing_ = false;
      }
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      // Decrements happen on other threads, increments only here: the count never overshoots.
      if (ctx_.open_connections->load() >= options_.max_connections) {
        ctx_.connections_refused.Increment();
        std::make_shared<HttpSession>(std::move(socket), ctx_, ConnectionSlot())
            ->Refuse(Status::Unavailable("the server has " + std::to_string(options_.max_connections) +
                                         " connections open (--max-connections); retry later"));
      } else {
        std::make_shared<HttpSession>(std::move(socket), ctx_,
                                      ConnectionSlot(ctx_.open_connections, io_connections_[next]))
            ->Start();
      }
      Accept();
    });
  }

  size_t LeastBusyIoContext() {
    size_t best = next_io_context_++ % io_contexts_.size();  // ties go round the threads
    for (size_t i = 0; i < io_connections_.size(); ++i) {
      if (io_connections_[i]->load() < io_connections_[best]->load()) best = i;
    }
    return best;
  }

  // A failed accept is almost always a resource running out (EMFILE/ENFILE: file descriptors;
  // ENOBUFS/ENOMEM), and the pending connection stays in the backlog, so accepting again at once
  // fails again at once: a loop that burns a core and floods the log. Instead the listener gives
  // its descriptor reserve to the rest of the process and pauses kAcceptBackoff (open connections
  // are served meanwhile, and closing them frees descriptors); it accepts again once it could take
  // the reserve back. One log line per kAcceptLogInterval says how many accepts failed.
  void AcceptFailed(const boost::system::error_code& ec) {
    reserve_.Release();
    NoteFailedAccept(ec.message());
    BackOff();
  }

  void BackOff() {
    accept_backoff_.expires_after(kAcceptBackoff);
    accept_backoff_.async_wait([this](boost::system::error_code wait_ec) {
      if (wait_ec || !acceptor_.is_open()) return;
      std::error_code exhausted = reserve_.Acquire();
      if (!exhausted) return Accept();
      reserve_.Release();  // not even the reserve is free yet: no accept, the headroom stays with the process
      NoteFailedAccept(exhausted.message());
      BackOff();
    });
  }

  // Counts an accept that failed (or was put off for want of descriptors); logs the first of a
  // run at once, then at most once per kAcceptLogInterval, with how many failed meanwhile.
  void NoteFailedAccept(const std::string& why) {
    ctx_.accept_failures.Increment();
    ++failed_accepts_;
    auto now = std::chrono::steady_clock::now();
    if (failing_ && now - last_accept_report_ < kAcceptLogInterval) return;
    CAIRN_LOG_WARN("http: cannot accept connections: {} ({} failed accepts since the last report); open "
                   "connections are still served; retrying every {} ms",
                   why, failed_accepts_, kAcceptBackoff.count());
    failed_accepts_ = 0;
    last_accept_report_ = now;
    failing_ = true;
  }

  HttpServerOptions options_;
  // One I/O context per I/O thread: each connection stays on one thread, so its handlers need no
  // strand and a reply posted from another thread wakes that one thread only. With one context
  // shared by all threads, a request cost about five thread switches on the I/O side (the
  // threads handing each other the reactor and the completions) instead of two.
  std::vector<std::unique_ptr<asio::io_context>> io_contexts_;
  std::vector<std::shared_ptr<std::atomic<int64_t>>> io_connections_;  // open connections per I/O context
  size_t next_io_context_ = 0;  // the acceptor's thread only
  exec::WorkerPool workers_;
  exec::WorkerPool catch_up_;
  ServerContext ctx_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_backoff_;
  DescriptorReserve reserve_;  // held while accepting; used on the acceptor's thread only
  bool failing_ = false;                                     // the last accept failed
  int64_t failed_accepts_ = 0;                               // since the last report
  std::chrono::steady_clock::time_point last_accept_report_;
  asio::signal_set signals_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_requested_ = false;
};

HttpServer::HttpServer(HttpServerOptions options, const Router& router, MetricsRegistry& metrics, bus::EventBus* bus,
                       bus::EphemeralHub* ephemeral)
    : impl_(std::make_unique<Impl>(std::move(options), router, metrics, bus, ephemeral)) {}

HttpServer::~HttpServer() = default;

Result<uint16_t> HttpServer::Listen() { return impl_->Listen(); }
void HttpServer::Run() { impl_->Run(); }
void HttpServer::Stop() { impl_->Stop(); }

}  // namespace cairn::server
