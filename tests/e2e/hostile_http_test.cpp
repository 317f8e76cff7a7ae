// Hostile HTTP, over raw sockets so that the bytes are exactly ours: request-smuggling framing,
// HEAD on a kept-alive connection, invalid UTF-8 echoed in errors, repeated or malformed query
// parameters, more connections than --max-connections, and a server out of file descriptors.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "e2e_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

const std::string kTitle = R"({"title":"smuggled?"})";
// Sent after each request's body: a server that misreads the framing answers it as a second request.
const std::string kSmuggled = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string Chunked(const std::string& body) {
  std::ostringstream out;
  out << std::hex << body.size() << "\r\n" << body << "\r\n0\r\n\r\n";
  return out.str();
}

std::string Request(const std::string& start_line, const std::string& headers, const std::string& body = "") {
  return start_line + "\r\nHost: x\r\n" + headers + "\r\n" + body;
}

class e2e_hostile : public ServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override { return {"--max-body-bytes", "4096"}; }
};

// Finding 5: a Transfer-Encoding other than chunked was ignored by the parser, so the body was
// read as the next request. Every ambiguous framing is now 400, the connection closes before
// anything after the header is read, and nothing is written.
TEST_F(e2e_hostile, AmbiguousFramingIs400ClosesTheConnectionAndWritesNothing) {
  const auto before = StoreSnapshot();
  const std::string len = std::to_string(kTitle.size());
  const std::string more = std::to_string(kTitle.size() + 1);
  const std::string json = "Content-Type: application/json\r\n";
  struct Case {
    std::string name, start_line, headers, body;
  };
  const std::vector<Case> cases = {
      {"gzip", "POST /breadcrumbs HTTP/1.1", "Transfer-Encoding: gzip\r\n", kTitle},
      {"identity", "POST /breadcrumbs HTTP/1.1", "Transfer-Encoding: identity\r\n", kTitle},
      {"gzip, chunked", "POST /breadcrumbs HTTP/1.1", "Transfer-Encoding: gzip, chunked\r\n", Chunked(kTitle)},
      {"chunked, chunked", "POST /breadcrumbs HTTP/1.1", "Transfer-Encoding: chunked, chunked\r\n", Chunked(kTitle)},
      {"two fields", "POST /breadcrumbs HTTP/1.1", "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
       Chunked(kTitle)},
      {"chunked twice", "POST /breadcrumbs HTTP/1.1", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
       Chunked(kTitle)},
      {"obs-fold", "POST /breadcrumbs HTTP/1.1", "Transfer-Encoding: gzip,\r\n chunked\r\n", Chunked(kTitle)},
      {"HTTP/1.0 chunked", "POST /breadcrumbs HTTP/1.0", "Transfer-Encoding: chunked\r\n", Chunked(kTitle)},
      {"TE then CL", "POST /breadcrumbs HTTP/1.1", "Transfer-Encoding: chunked\r\nContent-Length: " + len + "\r\n",
       Chunked(kTitle)},
      {"CL then TE", "POST /breadcrumbs HTTP/1.1", "Content-Length: " + len + "\r\nTransfer-Encoding: chunked\r\n",
       Chunked(kTitle)},
      {"two lengths", "POST /breadcrumbs HTTP/1.1", "Content-Length: " + len + "\r\nContent-Length: " + more + "\r\n",
       kTitle + " "},
      {"a list of two lengths", "POST /breadcrumbs HTTP/1.1", "Content-Length: " + len + ", " + more + "\r\n",
       kTitle + " "},
      {"signed length", "POST /breadcrumbs HTTP/1.1", "Content-Length: +" + len + "\r\n", kTitle},
  };
  for (const auto& c : cases) {
    RawConnection connection;
    ASSERT_TRUE(connection.Connect(server().port())) << connection.error();
    connection.Send(Request(c.start_line, json + c.headers, c.body) + kSmuggled);
    Response r = connection.ReadResponse();
    EXPECT_TRUE(IsError(r, 400, "bad_request")) << c.name << ": " << r.Describe();
    EXPECT_EQ(r.Header("connection").value_or(""), "close") << c.name;
    EXPECT_TRUE(connection.WaitClosed(10s)) << c.name << ": the connection stayed open";
    EXPECT_EQ(connection.pending(), "") << c.name << ": the smuggled request was answered";
  }
  EXPECT_EQ(StoreSnapshot(), before);
  EXPECT_EQ(client().Get("/health").status, 200);
}

// The shapes RFC 9112 allows are served, and the connection stays in sync after them.
TEST_F(e2e_hostile, UnambiguousFramingIsServedAndKeepsTheConnection) {
  const std::string len = std::to_string(kTitle.size());
  const std::string json = "Content-Type: application/json\r\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Content-Length: " + len + "\r\nContent-Length: " + len + "\r\n", kTitle},  // identical duplicates
      {"Content-Length: " + len + ", " + len + "\r\n", kTitle},
      {"Transfer-Encoding: Chunked\r\n", Chunked(kTitle)},                       // any case
      {"Content-Length: " + len + "\r\nX-Note: folded\r\n  on two lines\r\n", kTitle},  // obs-fold read as a space
  };
  RawConnection connection;
  ASSERT_TRUE(connection.Connect(server().port())) << connection.error();
  for (const auto& [headers, body] : cases) {
    connection.Send(Request("POST /breadcrumbs HTTP/1.1", json + headers, body));
    Response created = connection.ReadResponse();
    EXPECT_EQ(created.status, 201) << headers << " -> " << created.Describe();
  }
  connection.Send(kSmuggled);
  EXPECT_EQ(connection.ReadResponse().status, 200);
  EXPECT_EQ(ListIds().size(), cases.size());
}

// Chunk extensions and trailers count against no parser limit: the connection's buffer grew with
// them until the idle timeout. A framing line beyond the read buffer is now 400 and closes.
TEST_F(e2e_hostile, EndlessChunkFramingIs400AndClosesInsteadOfGrowing) {
  const auto before = StoreSnapshot();
  const std::string head = Request("POST /breadcrumbs HTTP/1.1",
                                   "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n");
  const std::string endless(256 * 1024, 'e');  // never ends its line
  for (const std::string& framing : {"5;" + endless, "0\r\nX-Trailer: " + endless}) {
    RawConnection connection;
    ASSERT_TRUE(connection.Connect(server().port())) << connection.error();
    connection.Send(head + framing, 10s);
    Response refused = connection.ReadResponse(false, 10s);  // not the 60 s idle timeout
    EXPECT_TRUE(IsError(refused, 400, "bad_request")) << refused.Describe();
    EXPECT_TRUE(connection.WaitClosed(10s));
  }
  EXPECT_EQ(StoreSnapshot(), before);
}

// Finding 5: a 405 answer to HEAD carried a body, which a kept-alive client reads as the start of
// the next response. No answer to HEAD carries body bytes, whatever its status; the headers are
// those of the GET answer, Content-Length included.
TEST_F(e2e_hostile, AnswersToHeadCarryNoBodyAndTheConnectionStaysInSync) {
  const std::string id = StringAt(CreateTitled("head"), "id");
  struct Case {
    std::string target;
    long status;
  };
  const std::vector<Case> cases = {
      {"/breadcrumbs/" + id, 200},     {"/breadcrumbs", 200},     {"/health", 200},
      {"/nope", 404},                  {"/breadcrumbs?bogus=1", 400}, {"/executions/x/cancel", 405},
      {"/breadcrumbs/" + id + "/x", 404},
  };
  RawConnection connection;
  ASSERT_TRUE(connection.Connect(server().port())) << connection.error();
  for (const auto& c : cases) {
    ASSERT_TRUE(connection.Send(Request("HEAD " + c.target + " HTTP/1.1", "")));
    Response head = connection.ReadResponse(/*head_only=*/true);
    EXPECT_EQ(head.status, c.status) << "HEAD " << c.target << " -> " << head.Describe();
    // The head a GET gets: for a success its Content-Length is the length of the GET's body (an
    // error's message names the method, so its length differs by one: it only has to be there).
    Response get = RawExchange(server().port(), Request("GET " + c.target + " HTTP/1.1", "Connection: close\r\n"));
    EXPECT_EQ(get.status, c.status) << "GET " << c.target;
    if (c.status == 200 && c.target != "/health") {  // /health's uptime may change length between the two
      EXPECT_EQ(head.Header("content-length"), std::to_string(get.body.size())) << "HEAD " << c.target;
    }
    EXPECT_NE(head.Header("content-length").value_or("0"), "0") << "HEAD " << c.target;
    EXPECT_EQ(head.Header("content-type"), get.Header("content-type")) << "HEAD " << c.target;
    if (c.status == 405) {
      EXPECT_EQ(head.Header("allow").value_or(""), "POST");
    }
    if (c.status == 200 && c.target.find(id) != std::string::npos) {
      EXPECT_EQ(head.Header("etag"), get.Header("etag"));
    }
    // Had a body been sent, this GET's answer would not start with a status line.
    ASSERT_TRUE(connection.Send(kSmuggled));
    Response next = connection.ReadResponse();
    EXPECT_EQ(next.status, 200) << "after HEAD " << c.target << ": " << next.Describe();
    EXPECT_FALSE(next.Json().is_null()) << next.Describe();
  }
  // Pipelined: both requests in one write.
  ASSERT_TRUE(connection.Send(Request("HEAD /nope HTTP/1.1", "") + kSmuggled));
  EXPECT_EQ(connection.ReadResponse(true).status, 404);
  Response after = connection.ReadResponse();
  EXPECT_EQ(after.status, 200) << after.Describe();
  EXPECT_EQ(connection.pending(), "");

  // A refused HEAD (body over --max-body-bytes: 413) closes the connection, still without a body.
  RawConnection big;
  ASSERT_TRUE(big.Connect(server().port())) << big.error();
  big.Send(Request("HEAD /breadcrumbs HTTP/1.1", "Content-Length: 5000\r\n"));
  Response refused = big.ReadResponse(true);
  EXPECT_EQ(refused.status, 413) << refused.Describe();
  EXPECT_NE(refused.Header("content-length").value_or("0"), "0");
  EXPECT_TRUE(big.WaitClosed(10s));
  EXPECT_EQ(big.pending(), "");

  // HEAD of an event stream: the stream's head, no stream, and the connection closes.
  RawConnection stream;
  ASSERT_TRUE(stream.Connect(server().port())) << stream.error();
  stream.Send(Request("HEAD /events/stream HTTP/1.1", ""));
  Response stream_head = stream.ReadResponse(true);
  EXPECT_EQ(stream_head.status, 200) << stream_head.Describe();
  EXPECT_EQ(stream_head.Header("content-type").value_or(""), "text/event-stream");
  EXPECT_TRUE(stream.WaitClosed(10s));
  EXPECT_EQ(stream.pending(), "");
}

// Finding 6: a 4xx body echoing invalid UTF-8 from the request was not JSON. Whatever the bytes
// of a path, a parameter or a header, the error body is valid JSON with U+FFFD in their place.
TEST_F(e2e_hostile, ErrorBodiesAreValidJsonWhateverTheRequestBytes) {
  const std::string id = StringAt(CreateTitled("utf8"), "id");
  struct Case {
    std::string request;
    long status;
  };
  const std::vector<Case> cases = {
      {Request("GET /nope%FF%FE HTTP/1.1", ""), 404},                               // the path
      {Request("GET /breadcrumbs?colour%FF=1 HTTP/1.1", ""), 400},                   // a parameter name
      {Request("GET /events/stream?types=%ED%A0%80 HTTP/1.1", ""), 400},             // a value (a surrogate)
      {Request("GET /sessions?status=%C0%AF HTTP/1.1", ""), 400},                    // an overlong form
      {Request("GET /dlq?webhook_id=%F4%90%80%80 HTTP/1.1", ""), 400},               // above U+10FFFF
      {Request("DELETE /breadcrumbs/" + id + " HTTP/1.1", "If-Match: \xFF\xFE\r\n"), 400},  // a header
  };
  for (const auto& c : cases) {
    Response r = RawExchange(server().port(), c.request);
    EXPECT_EQ(r.status, c.status) << c.request << " -> " << r.Describe();
    json::value body = r.Json();  // Boost.JSON refuses invalid UTF-8
    ASSERT_FALSE(body.is_null()) << "not JSON (" << r.ParseError() << "): " << JsonText(json::string(r.body));
    std::string message(body.at("error").at("message").as_string());
    EXPECT_NE(message.find(kReplacement), std::string::npos) << message;
  }
  EXPECT_EQ(FullOk(id).at("version").as_int64(), 1);  // the DELETE did not happen
}

// Finding 9: the same mistake had different answers (200, an open stream, 400 or 422). Every
// malformed, repeated or unknown parameter, on every route, is 400 naming the parameter.
TEST_F(e2e_hostile, EveryParameterMistakeIs400NamingIt) {
  const std::string id = StringAt(CreateTitled("params"), "id");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/dlq?cursor=garbage", "cursor"},
      {"/dlq?webhook_id=garbage", "webhook_id"},
      {"/dlq?limit=1001", "limit"},
      {"/events/stream?since=1&since=2", "since"},
      {"/events/stream?types=breadcrumb.created&types=breadcrumb.created", "types"},
      {"/events/stream?since=soon", "since"},
      {"/breadcrumbs?limit=1&limit=2", "limit"},
      {"/breadcrumbs?cursor=garbage", "cursor"},
      {"/breadcrumbs?include_context=yes", "include_context"},
      {"/sessions?limit=1&limit=2", "limit"},
      {"/sessions?cursor=garbage", "cursor"},
      {"/sessions?status=open", "status"},
      {"/executions?status=running&status=running", "status"},
      {"/executions?limit=0", "limit"},
      {"/health?verbose=1", "verbose"},
      {"/metrics?format=json", "format"},
      {"/webhooks?limit=1", "limit"},
      {"/subscriptions/selectors?x=1", "x"},
      {"/breadcrumbs/" + id + "?x=1", "x"},
      {"/breadcrumbs/" + id + "/full?x=1", "x"},
      {"/breadcrumbs/" + id + "/history?x=1", "x"},
      {"/sessions/" + id + "?x=1", "x"},
  };
  HttpClient quick(server().port());
  quick.set_timeout(10s);  // a stream opened by mistake would run until then
  for (const auto& [target, field] : cases) {
    Response r = quick.Get(target);
    EXPECT_TRUE(IsError(r, 400, "bad_request", field)) << "GET " << target;
  }
  // A write refused for its query writes nothing.
  const auto before = StoreSnapshot();
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs?dry_run=1", kTitle), 400, "bad_request", "dry_run"));
  EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + id + "?x=1", kTitle), 400, "bad_request", "x"));
  EXPECT_TRUE(IsError(client().Delete("/breadcrumbs/" + id + "?x=1"), 400, "bad_request", "x"));
  EXPECT_EQ(StoreSnapshot(), before);
}

class e2e_hostile_connections : public ServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override { return {"--max-connections", "3"}; }
};

// Beyond --max-connections (event streams count), a new connection gets a small 503 JSON error
// and is closed; once one closes, connections are accepted again.
TEST_F(e2e_hostile_connections, ConnectionsBeyondTheLimitAre503AndClosed) {
  std::vector<RawConnection> open(2);
  for (auto& c : open) {
    ASSERT_TRUE(c.Connect(server().port())) << c.error();
    c.Send(kSmuggled);
    ASSERT_EQ(c.ReadResponse().status, 200);
  }
  RawConnection stream;
  ASSERT_TRUE(stream.Connect(server().port())) << stream.error();
  stream.Send(Request("GET /events/stream HTTP/1.1", ""));
  ASSERT_EQ(stream.ReadResponse(/*head_only=*/true).status, 200);

  RawConnection refused;
  ASSERT_TRUE(refused.Connect(server().port())) << refused.error();
  refused.Send(kSmuggled);
  Response r = refused.ReadResponse();
  EXPECT_TRUE(IsError(r, 503, "unavailable")) << r.Describe();
  EXPECT_EQ(r.Header("connection").value_or(""), "close");
  EXPECT_TRUE(refused.WaitClosed(10s));

  // The stream still works, and the kept-alive connections too.
  open[0].Send(kSmuggled);
  EXPECT_EQ(open[0].ReadResponse().status, 200);

  // Close one: the server notices, and the next connection is served.
  open[1].Close();
  Response metrics;
  for (auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;) {
    metrics = RawExchange(server().port(), Request("GET /metrics HTTP/1.1", "Connection: close\r\n"), 10s);
    if (metrics.status != 503) break;
  }
  ASSERT_EQ(metrics.status, 200) << metrics.Describe();
  EXPECT_GE(MetricValue(metrics.body, "cairn_http_connections_refused_total"), 1) << metrics.body;
  EXPECT_EQ(MetricValue(metrics.body, "cairn_http_open_connections"), 3) << metrics.body;
}

// utime + stime of process `pid`, in seconds.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field && i <= 15; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime (proc(5))
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

off_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// Finding 4: with the open-file limit reached the accept loop spun at more than a core and wrote
// megabytes of log a second. Now the listener backs off: the server stays idle, logs a line, keeps
// serving the connections it has, and accepts again by itself once descriptors are free.
TEST(e2e_hostile_descriptors, OutOfFileDescriptorsTheServerIdlesServesAndRecovers) {
  constexpr rlim_t kLimit = 256;
  constexpr int kConnections = kLimit + 64;  // more than the server can hold
  ServerProcess server;
  server.SetResourceLimit(RLIMIT_NOFILE, kLimit, kLimit);
  ASSERT_TRUE(server.Start()) << server.error();
  const int port = server.port();

  RawConnection keeper;  // accepted first; serves the metrics and shows open connections are served
  ASSERT_TRUE(keeper.Connect(port)) << keeper.error();
  keeper.Send(kSmuggled);
  ASSERT_EQ(keeper.ReadResponse().status, 200);

  std::vector<RawConnection> flood(kConnections);
  for (auto& c : flood) {
    ASSERT_TRUE(c.Connect(port)) << c.error();  // the kernel completes it; the server may never accept it
    c.Send(kSmuggled);
  }
  // Until the server reports failed accepts (a request per round, no sleeping).
  double failures = 0;
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       failures < 1 && std::chrono::steady_clock::now() < deadline;) {
    ASSERT_TRUE(keeper.Send(Request("GET /metrics HTTP/1.1", "")));
    Response metrics = keeper.ReadResponse();
    ASSERT_EQ(metrics.status, 200) << metrics.Describe();
    failures = MetricValue(metrics.body, "cairn_http_accept_failures_total");
  }
  ASSERT_GE(failures, 1) << "accepts never failed\n" << server.LogTail();

  // A measured window while out of descriptors: little CPU, little log.
  const double cpu_before = CpuSeconds(server.pid());
  const off_t log_before = FileSize(server.log_path());
  std::this_thread::sleep_for(2s);
  const double cpu = CpuSeconds(server.pid()) - cpu_before;
  const off_t logged = FileSize(server.log_path()) - log_before;
  EXPECT_LT(cpu, 0.25) << "CPU seconds used in a 2 s window while out of descriptors";
  EXPECT_LT(logged, 512) << "log bytes written in a 2 s window while out of descriptors";
  EXPECT_NE(server.LogTail().find("cannot accept connections"), std::string::npos) << server.LogTail();

  // Open connections are still served.
  keeper.Send(kSmuggled);
  EXPECT_EQ(keeper.ReadResponse().status, 200);

  // Free the descriptors: a new connection is served without any help.
  flood.clear();
  Response after = RawExchange(port, Request("GET /health HTTP/1.1", "Connection: close\r\n"), 30s);
  EXPECT_EQ(after.status, 200) << after.Describe() << "\n" << server.LogTail();
  EXPECT_NE(server.LogTail().find("accepting connections again"), std::string::npos) << server.LogTail();
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace cairn::e2e
