// TempDir: a fresh directory under $TMPDIR (else /tmp), removed with everything in it when the
// object goes, unless CAIRN_TEST_KEEP=1 (or the e2e tests' CAIRN_E2E_KEEP=1) is set: then its path
// is printed for inspection.
#pragma once

#include <string>
#include <string_view>

namespace cairn::test_support {

class TempDir {
 public:
  // `prefix` names the directory: <tmp>/<prefix>-XXXXXX. A directory that cannot be made is a
  // test failure (ADD_FAILURE); path() is then empty and error() says why.
  explicit TempDir(std::string_view prefix = "cairn-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // <path>/<name>
  std::string Join(std::string_view name) const { return path_ + "/" + std::string(name); }
  bool ok() const { return !path_.empty(); }
  const std::string& error() const { return error_; }
  // Leave the directory in place when this object goes.
  void Keep() { keep_ = true; }

 private:
  std::string path_;
  std::string error_;
  bool keep_ = false;
};

}  // namespace cairn::test_support
