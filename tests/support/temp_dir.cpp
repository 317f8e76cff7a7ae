#include "support/temp_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace cairn::test_support {

TempDir::TempDir(std::string_view prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + std::string(prefix) + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    error_ = "mkdtemp " + pattern + ": " + std::strerror(errno);
    ADD_FAILURE() << error_;
    return;
  }
  path_ = pattern;
  for (const char* name : {"CAIRN_TEST_KEEP", "CAIRN_E2E_KEEP"}) {
    const char* keep = std::getenv(name);
    keep_ = keep_ || (keep != nullptr && *keep != '\0' && std::string(keep) != "0");
  }
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  if (keep_) {
    std::cerr << "kept " << path_ << "\n";
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace cairn::test_support
