// Process lifecycle and concurrency: crash durability (kill -9), graceful stop (SIGTERM/SIGINT),
// and concurrent writers over HTTP.
#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <latch>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "e2e_support.h"

namespace cairn::e2e {
namespace {

class e2e_lifecycle : public ServerTest {
 protected:
  struct Expected {
    std::map<std::string, json::value> full;     // id -> full record
    std::map<std::string, json::value> history;  // id -> history body
    std::vector<std::string> snapshot;
    std::vector<std::string> deleted;
  };

  // Creates `n` records, updates every third twice, deletes one, and records what must survive.
  Expected WriteWorkload(int n) {
    Expected e;
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      json::object body{{"title", "record " + std::to_string(i)},
                        {"tags", json::array{"batch", "n" + std::to_string(i % 5)}},
                        {"context", json::object{{"i", i}, {"text", std::string(i * 7, 'c')}}}};
      if (i % 4 == 0) body["path"] = "durable/" + std::to_string(i);
      json::object rec = CreateOk(body, {{"X-Cairn-Actor", "writer"}});
      if (rec.empty()) return e;
      ids.push_back(StringAt(rec, "id"));
    }
    for (int i = 0; i < n; i += 3) {
      PatchOk(ids[i], json::object{{"context", json::object{{"i", i}, {"updated", 1}}}}, {{"If-Match", "1"}});
      PatchOk(ids[i], json::object{{"title", "record " + std::to_string(i) + " v3"}, {"tags", json::array{"updated"}}},
              {{"X-Cairn-Actor", "editor"}});
    }
    e.deleted.push_back(ids[1]);
    EXPECT_EQ(client().Delete("/breadcrumbs/" + ids[1]).status, 204);
    for (const auto& id : ids) {
      if (id == ids[1]) continue;
      e.full[id] = FullOk(id);
      Response h = client().Get("/breadcrumbs/" + id + "/history");
      EXPECT_EQ(h.status, 200) << h.Describe();
      e.history[id] = h.Json();
    }
    e.snapshot = StoreSnapshot();
    return e;
  }

  void VerifyWorkload(const Expected& e) {
    for (const auto& [id, full] : e.full) {
      Response r = client().Get("/breadcrumbs/" + id + "/full");
      ASSERT_EQ(r.status, 200) << id << ": " << r.Describe();
      EXPECT_EQ(r.Json(), full) << id;
      Response h = client().Get("/breadcrumbs/" + id + "/history");
      ASSERT_EQ(h.status, 200) << id << ": " << h.Describe();
      EXPECT_EQ(h.Json(), e.history.at(id)) << id;
    }
    for (const auto& id : e.deleted) {
      EXPECT_TRUE(IsError(client().Get("/breadcrumbs/" + id), 404, "not_found")) << "deleted " << id << " is back";
    }
    EXPECT_EQ(StoreSnapshot(), e.snapshot);
  }
};

TEST_F(e2e_lifecycle, KillNineLosesNoAcknowledgedWrite) {
  Expected e = WriteWorkload(60);
  ASSERT_EQ(e.full.size(), 59u);
  server().Kill9();
  EXPECT_EQ(server().last_exit_code(), 128 + SIGKILL);
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  VerifyWorkload(e);
  // Writes continue from where they were: versions keep counting, paths stay unique.
  const std::string some_id = e.full.begin()->first;
  const int64_t version = IntAt(e.full.begin()->second.as_object(), "version");
  json::object patched = PatchOk(some_id, json::parse(R"({"title":"after restart"})"),
                                 {{"If-Match", std::to_string(version)}});
  EXPECT_EQ(IntAt(patched, "version"), version + 1);
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title":"dup","path":"durable/0"})"), 409, "conflict"));
}

TEST_F(e2e_lifecycle, SigtermStopsWithExitZeroAndKeepsData) {
  Expected e = WriteWorkload(20);
  EXPECT_EQ(server().Stop(SIGTERM), 0) << server().LogTail();
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  VerifyWorkload(e);
  // And a second cycle, via SIGINT.
  json::object late = CreateTitled("late");
  EXPECT_EQ(server().Stop(SIGINT), 0) << server().LogTail();
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  EXPECT_EQ(FullOk(StringAt(late, "id")), late);
}

// Several writers, then a crash or a stop in the middle: whatever was acknowledged survives.
class e2e_lifecycle_under_load : public ServerTest {
 protected:
  struct Acked {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::string> created;            // acknowledged creates (201)
    std::map<std::string, int64_t> patched;      // id -> last acknowledged version
    size_t count = 0;
  };

  // Runs `threads` writers until the server goes away; calls `interrupt` once `acks` writes are
  // acknowledged. Returns what was acknowledged. Creates carry `padding` bytes of context.
  void RunWritersAndInterrupt(int threads, size_t acks, const std::function<void()>& interrupt, Acked& acked,
                              size_t padding = 0) {
    const std::string pad = padding ? R"(,"pad":")" + std::string(padding, 'p') + "\"" : "";
    // Each patching thread owns one record.
    std::vector<std::string> own;
    for (int t = 0; t < threads; ++t) {
      json::object rec = CreateTitled("patched by thread " + std::to_string(t));
      ASSERT_FALSE(rec.empty());
      own.push_back(StringAt(rec, "id"));
      acked.patched[own.back()] = 1;
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    const int port = server().port();
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        HttpClient c(port);
        c.set_timeout(std::chrono::seconds(20));
        for (int i = 0; !stop.load(); ++i) {
          Response r;
          if (i % 2 == 0) {
            r = c.Post("/breadcrumbs", R"({"title":"load","context":{"t":)" + std::to_string(t) + pad + "}}");
            if (r.status == 201) {
              std::lock_guard lock(acked.mu);
              acked.created.push_back(StringAt(ObjectOf(r), "id"));
              ++acked.count;
              acked.cv.notify_all();
            }
          } else {
            r = c.Patch("/breadcrumbs/" + own[t], R"({"context":{"i":)" + std::to_string(i) + "}}");
            if (r.status == 200) {
              std::lock_guard lock(acked.mu);
              acked.patched[own[t]] = IntAt(ObjectOf(r), "version");
              ++acked.count;
              acked.cv.notify_all();
            }
          }
          if (r.status == 0 || r.status == 503) break;  // the server is gone or going
          if (r.status != 200 && r.status != 201 && r.status != 429) {
            ADD_FAILURE() << "unexpected " << r.Describe();
            break;
          }
        }
      });
    }
    {
      std::unique_lock lock(acked.mu);
      bool reached = acked.cv.wait_for(lock, std::chrono::seconds(90), [&] { return acked.count >= acks; });
      EXPECT_TRUE(reached) << "only " << acked.count << " writes acknowledged";
    }
    interrupt();
    stop = true;
    for (auto& w : workers) w.join();
  }

  void VerifyAcked(Acked& acked) {
    std::lock_guard lock(acked.mu);
    for (const auto& id : acked.created) {
      Response r = client().Get("/breadcrumbs/" + id + "/full");
      EXPECT_EQ(r.status, 200) << "acknowledged create " << id << " lost: " << r.Describe();
    }
    for (const auto& [id, version] : acked.patched) {
      json::object full = FullOk(id);
      // The acknowledged version, or one more if a write in flight committed without its answer.
      EXPECT_GE(IntAt(full, "version"), version) << id;
      EXPECT_LE(IntAt(full, "version"), version + 1) << id;
      Response h = client().Get("/breadcrumbs/" + id + "/history");
      ASSERT_EQ(h.status, 200);
      EXPECT_EQ(static_cast<int64_t>(ObjectOf(h).at("versions").as_array().size()), IntAt(full, "version")) << id;
    }
    std::set<std::string> listed;
    for (const auto& id : ListIds()) listed.insert(id);
    for (const auto& id : acked.created) EXPECT_TRUE(listed.count(id)) << id << " missing from the listing";
  }
};

TEST_F(e2e_lifecycle_under_load, KillNineDuringWrites) {
  Acked acked;
  RunWritersAndInterrupt(4, 300, [&] { server().Kill9(); }, acked);
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  VerifyAcked(acked);
}

// Writes that fill the log past the checkpoint threshold, so the background checkpointer copies
// it into the database while they go on; a kill -9 then (mid-checkpoint or not) loses nothing.
TEST_F(e2e_lifecycle_under_load, KillNineWhileTheLogIsCheckpointedInTheBackground) {
  auto background_checkpoints = [&] {
    std::string body = client().Get("/metrics").body;
    const std::string key = "\ncairn_store_checkpoints_total{by=\"background\"} ";
    size_t at = body.find(key);
    return at == std::string::npos ? int64_t{0} : std::atoll(body.c_str() + at + key.size());
  };
  Acked acked;
  RunWritersAndInterrupt(
      4, 600,
      [&] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (background_checkpoints() < 1) {  // writes go on meanwhile
          ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no background checkpoint";
        }
        server().Kill9();
      },
      acked, 8192);
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  VerifyAcked(acked);
}

TEST_F(e2e_lifecycle_under_load, SigtermDuringWrites) {
  Acked acked;
  int code = -2;
  RunWritersAndInterrupt(4, 300, [&] { code = server().Stop(SIGTERM); }, acked);
  EXPECT_EQ(code, 0) << server().LogTail();
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  VerifyAcked(acked);
}

class e2e_concurrency : public ServerTest {};

// Sends one request per client from its own thread, all released at once by a latch, and returns
// the responses in client order.
std::vector<Response> Race(std::vector<std::unique_ptr<HttpClient>>& clients,
                           const std::function<Response(HttpClient&, int)>& send) {
  const int n = static_cast<int>(clients.size());
  std::vector<Response> responses(clients.size());
  std::latch go(n);
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      go.arrive_and_wait();
      responses[t] = send(*clients[t], t);
    });
  }
  for (auto& th : threads) th.join();
  return responses;
}

TEST_F(e2e_concurrency, SameIfMatchFromEightThreadsExactlyOneWins) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 5;
  json::object rec = CreateOk(json::parse(R"({"title":"contended","context":{"winner":-1}})"));
  const std::string id = StringAt(rec, "id");
  ASSERT_FALSE(id.empty());
  std::vector<std::unique_ptr<HttpClient>> clients;
  for (int t = 0; t < kThreads; ++t) clients.push_back(std::make_unique<HttpClient>(server().port()));

  for (int round = 1; round <= kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<Response> responses = Race(clients, [&](HttpClient& client, int t) {
      return client.Patch("/breadcrumbs/" + id, R"({"context":{"winner":)" + std::to_string(t) + "}}",
                          {{"If-Match", std::to_string(round)}, {"X-Cairn-Actor", "t" + std::to_string(t)}});
    });
    int ok = 0, precondition = 0, winner = -1;
    for (int t = 0; t < kThreads; ++t) {
      if (responses[t].status == 200) {
        ++ok;
        winner = t;
        EXPECT_EQ(IntAt(ObjectOf(responses[t]), "version"), round + 1);
      } else {
        EXPECT_TRUE(IsError(responses[t], 412, "precondition_failed"));
        ++precondition;
      }
    }
    EXPECT_EQ(ok, 1);
    EXPECT_EQ(precondition, kThreads - 1);
    json::object full = FullOk(id);
    EXPECT_EQ(IntAt(full, "version"), round + 1);
    EXPECT_EQ(full.at("context"), json::parse(R"({"winner":)" + std::to_string(winner) + "}"));
    EXPECT_EQ(StringAt(full, "updated_by"), "t" + std::to_string(winner));
  }
  Response h = client().Get("/breadcrumbs/" + id + "/history");
  ASSERT_EQ(h.status, 200);
  EXPECT_EQ(ObjectOf(h).at("versions").as_array().size(), static_cast<size_t>(kRounds + 1));
}

TEST_F(e2e_concurrency, SameIdempotencyKeyFromEightThreadsMakesOneRecord) {
  constexpr int kThreads = 8;
  std::vector<std::unique_ptr<HttpClient>> clients;
  for (int t = 0; t < kThreads; ++t) clients.push_back(std::make_unique<HttpClient>(server().port()));
  std::vector<Response> responses = Race(clients, [](HttpClient& client, int) {
    return client.Post("/breadcrumbs", R"({"title":"exactly once"})", {{"Idempotency-Key", "race-1"}});
  });
  int created = 0, replayed = 0;
  std::set<std::string> ids;
  for (const auto& r : responses) {
    if (r.status == 201) ++created;
    if (r.status == 200) {
      ++replayed;
      EXPECT_EQ(r.Header("idempotent-replayed").value_or(""), "true");
    }
    EXPECT_TRUE(r.status == 200 || r.status == 201) << r.Describe();
    if (r.status == 200 || r.status == 201) ids.insert(StringAt(ObjectOf(r), "id"));
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(replayed, kThreads - 1);
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(ListIds().size(), 1u);
}

TEST_F(e2e_concurrency, SamePathFromEightThreadsOneWinsRestConflict) {
  constexpr int kThreads = 8;
  std::vector<std::unique_ptr<HttpClient>> clients;
  for (int t = 0; t < kThreads; ++t) clients.push_back(std::make_unique<HttpClient>(server().port()));
  std::vector<Response> responses = Race(clients, [](HttpClient& client, int t) {
    return client.Post("/breadcrumbs", R"({"title":"t)" + std::to_string(t) + R"(","path":"only/one"})");
  });
  int created = 0;
  for (const auto& r : responses) {
    if (r.status == 201) {
      ++created;
    } else {
      EXPECT_TRUE(IsError(r, 409, "conflict"));
    }
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(ListIds("path=only/one").size(), 1u);
}

}  // namespace
}  // namespace cairn::e2e
