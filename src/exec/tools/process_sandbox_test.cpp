#include "exec/tools/process_sandbox.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>

namespace cairn::exec {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> AsMap(const std::vector<std::pair<std::string, std::string>>& env) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : env) {
    EXPECT_TRUE(out.emplace(name, value).second) << "twice: " << name;
  }
  return out;
}

TEST(ToolEnvironment, BaseVariablesThenAllowedNames) {
  ::setenv("CAIRN_SANDBOX_TEST_ALLOWED", "yes", 1);
  ::setenv("TZ", "Europe/Paris", 1);
  ::unsetenv("CAIRN_SANDBOX_TEST_UNSET");
  model::ToolEnvPolicy policy;
  policy.allow = {"*"};
  // CAIRN_* is refused whatever the allow-list says: use an ordinary name for the allowed one.
  ::setenv("SANDBOX_TEST_ALLOWED", "yes", 1);
  ::setenv("SANDBOX_TEST_KEY", "secret", 1);
  policy.secret_names = {"SANDBOX_TEST_KEY"};
  auto env = AsMap(ToolEnvironment({"SANDBOX_TEST_ALLOWED", "SANDBOX_TEST_UNSET", "HOME", "PATH",
                                    "CAIRN_SANDBOX_TEST_ALLOWED", "SANDBOX_TEST_KEY"},
                                   policy, "/run/home"));
  ::unsetenv("CAIRN_SANDBOX_TEST_ALLOWED");
  ::unsetenv("SANDBOX_TEST_ALLOWED");
  ::unsetenv("SANDBOX_TEST_KEY");
  EXPECT_EQ(env["PATH"], std::getenv("PATH"));
  EXPECT_EQ(env["TZ"], "Europe/Paris");
  EXPECT_EQ(env["HOME"], "/run/home");  // the run's own, never the server's
  EXPECT_EQ(env["SANDBOX_TEST_ALLOWED"], "yes");
  EXPECT_EQ(env.count("SANDBOX_TEST_UNSET"), 0u);
  EXPECT_EQ(env.count("CAIRN_SANDBOX_TEST_ALLOWED"), 0u);
  EXPECT_EQ(env.count("SANDBOX_TEST_KEY"), 0u);

  // Without an allow-list only the base variables are there.
  ::setenv("SANDBOX_TEST_ALLOWED", "yes", 1);
  env = AsMap(ToolEnvironment({"SANDBOX_TEST_ALLOWED"}, model::ToolEnvPolicy{}, "/h"));
  ::unsetenv("SANDBOX_TEST_ALLOWED");
  EXPECT_EQ(env.count("SANDBOX_TEST_ALLOWED"), 0u);
}

TEST(RunDirectory, IsPrivateAndRemovedWithEverythingInIt) {
  const fs::path root = fs::temp_directory_path() / ("cairn-sandbox-test-" + std::to_string(::getpid()));
  fs::create_directories(root / "outside");
  std::ofstream(root / "outside" / "keep") << "x";
  ProcessToolOptions options;
  options.run_root = root.string();
  std::string path;
  {
    auto dir = RunDirectory::Create(options);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    path = dir->path();
    EXPECT_EQ(fs::path(path).parent_path(), root);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(st.st_uid, ::geteuid());
    // What a tool might leave: nested files, a directory it closed to everyone, a link out.
    fs::create_directories(fs::path(path) / "a" / "b");
    std::ofstream(fs::path(path) / "a" / "b" / "f") << "data";
    fs::create_directories(fs::path(path) / "locked" / "inner");
    fs::permissions(fs::path(path) / "locked", fs::perms::none);
    fs::create_directory_symlink(root / "outside", fs::path(path) / "link");
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::exists(root / "outside" / "keep"));  // the link was removed, not followed
  fs::remove_all(root);
}

TEST(RunDirectory, BelongsToTheToolUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  auto user = ResolveToolUser("nobody");
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  ASSERT_TRUE(user->has_value());
  ProcessToolOptions options;
  options.user = *user;
  auto dir = RunDirectory::Create(options);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(dir->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, (*user)->uid);
  EXPECT_EQ(st.st_gid, (*user)->gid);
}

TEST(ResolveToolUser, KnowsUsersAndRefusesOthers) {
  auto unknown = ResolveToolUser("cairn-no-such-user");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("no such user"), std::string::npos);

  const passwd* self = ::getpwuid(::geteuid());
  ASSERT_NE(self, nullptr);
  auto own = ResolveToolUser(self->pw_name);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_FALSE(own->has_value());  // nothing to change

  const passwd* nobody = ::getpwnam("nobody");
  if (nobody == nullptr || nobody->pw_uid == ::geteuid()) GTEST_SKIP() << "no separate user nobody";
  auto other = ResolveToolUser("nobody");
  if (::geteuid() != 0) {
    ASSERT_FALSE(other.ok());
    EXPECT_NE(other.status().message().find("root"), std::string::npos);
    return;
  }
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  ASSERT_TRUE(other->has_value());
  EXPECT_EQ((*other)->uid, nobody->pw_uid);
  EXPECT_EQ((*other)->gid, nobody->pw_gid);
  EXPECT_FALSE((*other)->groups.empty());  // getgrouplist includes the primary group
}

TEST(ProcessSandboxWarnings, RootWithoutAToolUserIsWarnedAbout) {
  auto mentions_root = [](const std::vector<std::string>& warnings) {
    for (const std::string& w : warnings) {
      if (w.find("--tool-user") != std::string::npos) return true;
    }
    return false;
  };
  ProcessToolOptions options;
  EXPECT_EQ(mentions_root(ProcessSandboxWarnings(options)), ::geteuid() == 0);
  options.user = RunAs{65534, 65534, {}};
  EXPECT_FALSE(mentions_root(ProcessSandboxWarnings(options)));
}

}  // namespace
}  // namespace cairn::exec
