// Faults the server must survive without losing anything it acknowledged: kill -9 under write
// load (repeatedly), and a full disk (a small tmpfs as the data dir): writes answer 507, reads go
// on, and writes succeed again once space returns.
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "e2e_support.h"
#include "sse_client.h"

namespace cairn::e2e {
namespace {

constexpr std::chrono::seconds kWait{30};

// Every event from seq 1 to the newest: asserts the log has no gap and returns the ids of the
// records whose creation it holds.
std::set<std::string> CreatedInEventLog(const ServerProcess& server, HttpClient& client) {
  SseClient stream(server.url() + "/events/stream?since=0");
  stream.Start();
  // A marker written now is the last event the stream must reach.
  Response marker = client.Post("/breadcrumbs", R"({"title":"marker"})");
  EXPECT_EQ(marker.status, 201);
  const std::string marker_id = StringAt(ObjectOf(marker), "id");
  EXPECT_TRUE(stream.WaitFor([&](const std::vector<SseFrame>& frames) {
    for (const auto& f : frames) {
      if (f.data && f.data->find(marker_id) != std::string::npos) return true;
    }
    return false;
  }, kWait)) << stream.Describe();
  std::set<std::string> created;
  int64_t expected = 1;
  for (const SseFrame& frame : stream.Events()) {
    EXPECT_EQ(frame.Seq(), expected++) << "gap in the event log";
    json::object event = frame.Json().as_object();
    if (StringAt(event, "type") == "breadcrumb.created") created.insert(StringAt(event, "breadcrumb_id"));
  }
  return created;
}

class e2e_faults : public ServerTest {};

TEST_F(e2e_faults, RepeatedKillNineUnderWriteLoadLosesNoAcknowledgedWriteOrEvent) {
  std::mutex mu;
  std::condition_variable acked_more;
  std::vector<std::string> acked;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::atomic<bool> stop{false};
    std::atomic<size_t> round_acks{0};
    std::vector<std::thread> writers;
    const int port = server().port();
    for (int t = 0; t < 4; ++t) {
      writers.emplace_back([&, t] {
        HttpClient c(port);
        c.set_timeout(std::chrono::seconds(20));
        for (int i = 0; !stop.load(); ++i) {
          Response r = c.Post("/breadcrumbs", R"({"title":"load","tags":["load"],"context":{"t":)" +
                                                  std::to_string(t) + ",\"i\":" + std::to_string(i) + "}}");
          if (r.status == 201) {
            std::lock_guard lock(mu);
            acked.push_back(StringAt(ObjectOf(r), "id"));
            ++round_acks;
            acked_more.notify_all();
          } else if (r.status == 0) {
            break;  // killed
          } else if (r.status != 429) {
            ADD_FAILURE() << r.Describe();
            break;
          }
        }
      });
    }
    // Kill once this round has had some acknowledged writes, in the middle of the load.
    {
      std::unique_lock lock(mu);
      acked_more.wait_for(lock, kWait, [&] { return round_acks.load() >= 200; });
    }
    server().Kill9();
    stop = true;
    for (auto& w : writers) w.join();
    ASSERT_GE(round_acks.load(), 200u);
    ASSERT_TRUE(server().Start()) << server().error();
    Reconnect();
  }
  std::set<std::string> listed;
  for (const auto& id : ListIds("tag=load")) listed.insert(id);
  std::set<std::string> in_log = CreatedInEventLog(server(), client());
  for (const auto& id : acked) {
    EXPECT_TRUE(listed.count(id)) << "acknowledged create " << id << " lost";
    EXPECT_TRUE(in_log.count(id)) << "acknowledged create " << id << " has no event";
  }
  // Nothing that was not written appears either: every listed record has its event.
  for (const auto& id : listed) EXPECT_TRUE(in_log.count(id)) << id;
}

// A tmpfs of a few MiB as the data dir, mounted for the test (needs root, as in CI).
class e2e_full_disk : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/cairn-full-disk-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    mount_ = dir;
    if (mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=16m") != 0) {
      std::filesystem::remove(mount_);
      mount_.clear();
      GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << std::strerror(errno);
    }
  }
  void TearDown() override {
    server_.reset();
    if (!mount_.empty()) {
      umount2(mount_.c_str(), MNT_DETACH);
      std::filesystem::remove(mount_);
    }
  }
  // Fills the file system but for about `leave` bytes.
  void Fill(size_t leave) {
    struct statvfs fs {};
    ASSERT_EQ(statvfs(mount_.c_str(), &fs), 0);
    size_t free_bytes = static_cast<size_t>(fs.f_bavail) * fs.f_frsize;
    ASSERT_GT(free_bytes, leave);
    std::ofstream filler(mount_ + "/filler", std::ios::binary);
    std::string block(1 << 16, 'x');
    for (size_t written = 0; written + block.size() <= free_bytes - leave; written += block.size()) filler << block;
  }

  std::string mount_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(e2e_full_disk, WritesAnswer507ReadsGoOnAndNothingAcknowledgedIsLost) {
  server_ = std::make_unique<ServerProcess>(std::vector<std::string>{"--data-dir", mount_ + "/data"});
  ASSERT_TRUE(server_->Start()) << server_->error();
  HttpClient client(server_->port());
  Response first = client.Post("/breadcrumbs", R"({"title":"before the disk filled"})");
  ASSERT_EQ(first.status, 201) << first.Describe();
  const std::string first_id = StringAt(ObjectOf(first), "id");
  Fill(256 * 1024);

  // Four writers at once, so that the disk fills up in the middle of batches of several writes.
  const std::string padding(4000, 'p');
  std::mutex mu;
  std::vector<std::string> acked;
  std::vector<Response> refusals;
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      HttpClient c(server_->port());
      for (int i = 0; i < 1000; ++i) {
        Response r = c.Post("/breadcrumbs", R"({"title":"fill","tags":["fill"],"context":{"pad":")" + padding + "\"}}");
        std::lock_guard lock(mu);
        if (r.status != 201) {
          refusals.push_back(r);
          return;
        }
        acked.push_back(StringAt(ObjectOf(r), "id"));
      }
    });
  }
  for (auto& w : writers) w.join();
  ASSERT_EQ(refusals.size(), 4u);
  for (const Response& refused : refusals) {
    EXPECT_TRUE(IsError(refused, 507, "insufficient_storage")) << refused.Describe() << "\n" << server_->LogTail();
  }
  // Reads go on while the disk is full.
  EXPECT_EQ(client.Get("/health").status, 200);
  EXPECT_EQ(client.Get("/breadcrumbs/" + first_id).status, 200);
  if (!acked.empty()) {
    EXPECT_EQ(client.Get("/breadcrumbs/" + acked.back()).status, 200);
  }
  EXPECT_EQ(client.Get("/breadcrumbs?limit=5").status, 200);
  // Still full: still refused, the same way. The space a refused batch had taken may hold one
  // more record once SQLite gave it back, so a write that fits is acknowledged (and must survive
  // like the others); the disk fills again within a few writes.
  bool refused_again = false;
  for (int i = 0; i < 20 && !refused_again; ++i) {
    Response more = client.Post("/breadcrumbs", R"({"title":"x","tags":["fill"],"context":{"pad":")" + padding + "\"}}");
    if (more.status == 201) {
      acked.push_back(StringAt(ObjectOf(more), "id"));
      continue;
    }
    EXPECT_TRUE(IsError(more, 507, "insufficient_storage")) << more.Describe();
    refused_again = true;
  }
  EXPECT_TRUE(refused_again) << "the disk stayed full, yet 20 more writes were acknowledged";

  // Space returns: writes succeed again without a restart.
  std::filesystem::remove(mount_ + "/filler");
  Response after = client.Post("/breadcrumbs", R"({"title":"after space returned"})");
  ASSERT_EQ(after.status, 201) << after.Describe() << "\n" << server_->LogTail();
  acked.push_back(StringAt(ObjectOf(after), "id"));

  // A crash now loses nothing that was acknowledged, and the event log has no gap.
  server_->Kill9();
  ASSERT_TRUE(server_->Start()) << server_->error();
  HttpClient again(server_->port());
  for (const auto& id : acked) EXPECT_EQ(again.Get("/breadcrumbs/" + id).status, 200) << id;
  // And nothing that was refused was written: the stored fill records are exactly the acknowledged.
  std::set<std::string> stored;
  for (std::string cursor;;) {
    json::object page = ObjectOf(again.Get("/breadcrumbs?tag=fill&limit=1000" + (cursor.empty() ? "" : "&cursor=" + cursor)));
    for (const auto& item : page["items"].as_array()) stored.insert(StringAt(item.as_object(), "id"));
    if (!page["next_cursor"].is_string()) break;
    cursor = std::string(page["next_cursor"].as_string());
  }
  std::set<std::string> acked_fill(acked.begin(), acked.end() - 1);  // the last is "after space returned"
  EXPECT_EQ(stored, acked_fill);
  std::set<std::string> in_log = CreatedInEventLog(*server_, again);
  for (const auto& id : acked) EXPECT_TRUE(in_log.count(id)) << id << " has no event";
  EXPECT_TRUE(in_log.count(first_id));
}

}  // namespace
}  // namespace cairn::e2e
