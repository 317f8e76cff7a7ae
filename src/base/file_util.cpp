#include "base/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cairn {
namespace {

Status Failed(const std::string& what, const std::string& path) {
  return Status::Internal("cannot " + what + " " + path + ": " + std::strerror(errno));
}

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<std::string> ReadWholeFile(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return Status::NotFound("no file " + path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Failed("read", path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return Failed("read", path);
  return std::move(bytes).str();
}

Status WriteFileAtomically(const std::string& path, const std::string& bytes, mode_t mode) {
  const std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Failed("create", temp);
  bool written = WriteAll(fd, bytes) && ::fsync(fd) == 0;
  ::close(fd);
  if (!written) {
    Status failed = Failed("write", temp);
    ::unlink(temp.c_str());
    return failed;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    Status failed = Failed("rename into", path);
    ::unlink(temp.c_str());
    return failed;
  }
  // The rename itself is durable only once the directory is.
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Failed("open the directory of", path);
  bool synced = ::fsync(dir_fd) == 0;
  ::close(dir_fd);
  return synced ? Status::Ok() : Failed("sync the directory of", path);
}

}  // namespace cairn
