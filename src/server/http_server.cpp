#include "server/http_server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <thread>
#include <vector>

#include "base/log.h"
#include "server/http_session.h"
#include "server/server_context.h"

namespace cairn::server {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, const Router& router, MetricsRegistry& metrics, bus::EventBus* bus,
       bus::EphemeralHub* ephemeral)
      : options_(std::move(options)),
        workers_(static_cast<size_t>(options_.worker_threads)),
        catch_up_(2),
        ctx_(options_, router, metrics, workers_.get_executor(), catch_up_.get_executor(), bus, ephemeral),
        acceptor_(asio::make_strand(ioc_)),
        signals_(ioc_, SIGINT, SIGTERM) {}

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
    int threads = options_.io_threads > 0 ? options_.io_threads : static_cast<int>(std::thread::hardware_concurrency());
    std::vector<std::thread> io_threads;
    for (int i = 0; i < std::max(threads, 1); ++i) io_threads.emplace_back([this] { ioc_.run(); });

    {
      std::unique_lock lock(stop_mu_);
      stop_cv_.wait(lock, [this] { return stop_requested_; });
    }
    // Stop accepting, then give in-flight requests the grace period to finish.
    asio::post(acceptor_.get_executor(), [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      signals_.cancel(ignored);
    });
    {
      std::unique_lock lock(ctx_.mu);
      bool drained = ctx_.drained.wait_for(lock, std::chrono::milliseconds(options_.shutdown_grace_ms),
                                           [this] { return ctx_.in_flight == 0; });
      if (!drained) CAIRN_LOG_WARN("http: {} requests still in flight after the grace period", ctx_.in_flight);
    }
    ioc_.stop();
    for (auto& thread : io_threads) thread.join();
    workers_.join();
    catch_up_.join();
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
  void Accept() {
    acceptor_.async_accept(asio::make_strand(ioc_), [this](boost::system::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
        CAIRN_LOG_WARN("http: accept failed: {}", ec.message());  // e.g. out of file descriptors
      } else {
        boost::system::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        std::make_shared<HttpSession>(std::move(socket), ctx_)->Start();
      }
      Accept();
    });
  }

  HttpServerOptions options_;
  asio::io_context ioc_;
  asio::thread_pool workers_;
  asio::thread_pool catch_up_;
  ServerContext ctx_;
  tcp::acceptor acceptor_;
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
