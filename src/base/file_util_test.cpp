#include "base/file_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

namespace cairn {
namespace {

class FileUtilTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cairn-file-util-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string PathOf(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST_F(FileUtilTest, WritesReadsAndReplacesWholeFilesWithTheirMode) {
  const std::string path = PathOf("key");
  ASSERT_TRUE(WriteFileAtomically(path, std::string("first\0bytes", 11), 0600).ok());
  auto read = ReadWholeFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, std::string("first\0bytes", 11));
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600U);

  ASSERT_TRUE(WriteFileAtomically(path, "second", 0600).ok());
  EXPECT_EQ(*ReadWholeFile(path), "second");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));  // nothing left beside it
}

TEST_F(FileUtilTest, AMissingFileIsNotFoundAndAnUnwritablePlaceAnError) {
  auto missing = ReadWholeFile(PathOf("absent"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  Status unwritable = WriteFileAtomically(PathOf("no-such-dir/key"), "x", 0600);
  EXPECT_EQ(unwritable.code(), StatusCode::kInternal);
  EXPECT_NE(unwritable.message().find("no-such-dir"), std::string::npos) << unwritable.message();
}

}  // namespace
}  // namespace cairn
