#include "store/sqlite/wal_checkpointer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/temp_dir.h"

namespace cairn::store::sqlite {
namespace {

using namespace std::chrono_literals;

class WalCheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = Connection::Open(Path(), "normal");
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    writer_ = std::move(writer).value();
    ASSERT_TRUE(writer_->Exec("CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT)").ok());
  }
  std::string Path() const { return dir_.path() + "/test.db"; }
  // One transaction of `rows` rows of 2 KiB each: about `rows` pages of log.
  void Write(int rows) {
    ASSERT_TRUE(writer_->Exec("BEGIN").ok());
    for (int i = 0; i < rows; ++i) {
      ASSERT_TRUE(writer_->Exec("INSERT INTO rows (body) VALUES (printf('%.2048c', 'x'))").ok());
    }
    ASSERT_TRUE(writer_->Exec("COMMIT").ok());
  }
  int64_t Rows() {
    auto count = writer_->Prepare("SELECT COUNT(*) FROM rows");
    EXPECT_TRUE(count.ok());
    auto stepped = (*count)->Step();
    return stepped.ok() && *stepped ? (*count)->Int(0) : -1;
  }
  uintmax_t FileSize(const std::string& suffix) const {
    std::error_code ec;
    uintmax_t size = std::filesystem::file_size(Path() + suffix, ec);
    return ec ? 0 : size;
  }

  test_support::TempDir dir_;
  std::unique_ptr<Connection> writer_;
};

TEST_F(WalCheckpointerTest, TheThreadCheckpointsOnceTheLogIsLongEnoughAndTheCommitDoesNot) {
  MetricsRegistry metrics;
  auto checkpointer = WalCheckpointer::Start(Path(), "normal", {.start_pages = 50, .inline_pages = 100000}, &metrics);
  ASSERT_TRUE(checkpointer.ok()) << checkpointer.status().message();
  (*checkpointer)->Attach(*writer_);
  const uintmax_t database_before = FileSize("");
  Write(10);  // below the threshold: nothing is asked
  EXPECT_FALSE((*checkpointer)->WaitForCheckpoints(1, 200ms));
  EXPECT_EQ((*checkpointer)->background_checkpoints(), 0);
  Write(100);
  ASSERT_TRUE((*checkpointer)->WaitForCheckpoints(1, 10s));
  EXPECT_GE((*checkpointer)->background_checkpoints(), 1);
  EXPECT_EQ((*checkpointer)->inline_checkpoints(), 0);
  // The rows reached the database file, and the log starts over with the next write.
  EXPECT_GT(FileSize(""), database_before + 50 * 2048);
  EXPECT_EQ(Rows(), 110);
  std::string text = metrics.RenderPrometheus();
  EXPECT_NE(text.find("cairn_store_checkpoints_total{by=\"background\"} "), std::string::npos) << text;
  (*checkpointer)->Stop();
  WalCheckpointer::Detach(*writer_);
}

TEST_F(WalCheckpointerTest, ACommitCheckpointsItselfWhenTheThreadFallsBehind) {
  auto checkpointer = WalCheckpointer::Start(Path(), "normal", {.start_pages = 20, .inline_pages = 200}, nullptr);
  ASSERT_TRUE(checkpointer.ok()) << checkpointer.status().message();
  (*checkpointer)->Stop();  // the thread is gone: only the commits' own checkpoints bound the log
  (*checkpointer)->Attach(*writer_);
  for (int i = 0; i < 20; ++i) Write(50);
  EXPECT_EQ((*checkpointer)->background_checkpoints(), 0);
  EXPECT_GE((*checkpointer)->inline_checkpoints(), 1);
  // A log that restarts after each inline checkpoint stays near the bound (200 pages of 4 KiB,
  // plus the transaction that crossed it), not the 1,000 pages the 20 transactions wrote.
  EXPECT_LT(FileSize("-wal"), 400u * 4096) << FileSize("-wal");
  EXPECT_EQ(Rows(), 1000);
  WalCheckpointer::Detach(*writer_);
}

}  // namespace
}  // namespace cairn::store::sqlite
