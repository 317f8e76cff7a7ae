#include "support/postgres_server.h"

#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <vector>

#include "support/subprocess.h"

namespace cairn::test_support {
namespace {

// Under /tmp rather than $TMPDIR: the socket's path, <dir>/.s.PGSQL.5432, must fit in a Unix
// socket address (107 bytes).
constexpr std::string_view kTmp = "/tmp";
constexpr std::string_view kDirPrefix = "cairn-pg-";
// The same in every process: the socket's directory tells the servers apart.
constexpr int kPort = 5432;
// Longer than pg_ctl -w's own 60 seconds, so pg_ctl reports a slow start itself.
constexpr std::chrono::seconds kToolTimeout{90};

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

bool IsExecutable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

bool KeepRequested() {
  for (const char* name : {"CAIRN_TEST_KEEP", "CAIRN_E2E_KEEP"}) {
    const char* keep = std::getenv(name);
    if (keep != nullptr && *keep != '\0' && std::string(keep) != "0") return true;
  }
  return false;
}

// PostgreSQL 15's programs: where Debian's postgresql-15 puts them, else where pg_config says.
Result<std::string> FindBinDir() {
  auto has_tools = [](const std::string& dir) {
    return IsExecutable(dir + "/initdb") && IsExecutable(dir + "/pg_ctl");
  };
  const std::string debian = "/usr/lib/postgresql/15/bin";
  if (has_tools(debian)) return debian;
  ProcessResult config = RunProcess({"pg_config", "--bindir"});
  std::string dir = Trimmed(config.out);
  if (config.exit_code == 0 && has_tools(dir)) return dir;
  return Status::Unavailable("PostgreSQL's initdb and pg_ctl are neither in " + debian +
                             " nor in `pg_config --bindir` (install postgresql-15: scripts/install-deps)");
}

// Runs one of the server's programs to completion, as `nobody` when the process is root
// (PostgreSQL refuses to run as root). The error carries the program's output.
Status RunTool(const std::string& program, bool as_nobody, std::vector<std::string> args) {
  std::vector<std::string> argv;
  if (as_nobody) argv = {"runuser", "-u", "nobody", "--"};
  argv.push_back(program);
  argv.insert(argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  ProcessOptions options;
  options.timeout = kToolTimeout;
  ProcessResult run = RunProcess(argv, options);
  if (run.exit_code == 0) return Status::Ok();
  return Status::Internal(Joined(argv) + ": exit " + std::to_string(run.exit_code) + ": " +
                          Trimmed(run.err + run.out));
}

// The first number in `path`, or 0.
pid_t ReadPid(const std::filesystem::path& path) {
  std::ifstream in(path);
  long pid = 0;
  return in >> pid ? static_cast<pid_t>(pid) : 0;
}

// Stops the servers of test processes that died without their exit handlers (a crash, the SIGKILL
// of ctest's timeout) and removes their directories. A directory without a readable owner is being
// made, or was kept (CAIRN_TEST_KEEP): it stays.
void StopAbandoned(const std::string& bin_dir, bool as_nobody) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it(kTmp, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (!it->path().filename().string().starts_with(kDirPrefix)) continue;
    const pid_t owner = ReadPid(it->path() / "owner");
    if (owner <= 0 || ::kill(owner, 0) == 0 || errno != ESRCH) continue;
    const std::string data = (it->path() / "data").string();
    std::error_code ignored;  // another process may be removing it too
    if (fs::exists(data + "/postmaster.pid", ignored)) {
      (void)RunTool(bin_dir + "/pg_ctl", as_nobody, {"-w", "-D", data, "-m", "immediate", "stop"});
    }
    fs::remove_all(it->path(), ignored);
  }
}

// The OS user the server runs as; initdb makes it the superuser role too.
Result<std::string> ServerUser(bool as_nobody) {
  if (as_nobody) return std::string("nobody");
  const passwd* me = ::getpwuid(::geteuid());
  if (me == nullptr) return Status::Internal("no user name for uid " + std::to_string(::geteuid()));
  return std::string(me->pw_name);
}

// mkdtemp under /tmp, with the file naming this process as its owner (written whole through a
// rename, so StopAbandoned never reads half a pid), handed to `nobody` when the server runs as it.
Result<std::string> MakeDirectory(bool as_nobody) {
  std::string dir = std::string(kTmp) + "/" + std::string(kDirPrefix) + "XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) return Status::Internal("mkdtemp " + dir + ": " + std::strerror(errno));
  auto failed = [&dir](std::string why) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    return Status::Internal(std::move(why));
  };
  {
    std::ofstream owner(dir + "/owner.new");
    owner << ::getpid() << "\n";
    if (!owner.flush()) return failed("cannot write " + dir + "/owner.new");
  }
  if (::rename((dir + "/owner.new").c_str(), (dir + "/owner").c_str()) != 0) {
    return failed("rename " + dir + "/owner: " + std::strerror(errno));
  }
  if (as_nobody) {
    const passwd* nobody = ::getpwnam("nobody");
    if (nobody == nullptr) return failed("no user `nobody` to run PostgreSQL as (it refuses root)");
    if (::chown(dir.c_str(), nobody->pw_uid, nobody->pw_gid) != 0) {
      return failed("chown nobody " + dir + ": " + std::strerror(errno));
    }
  }
  return dir;
}

// The end of the server's log: why it did not start.
std::string LogTail(const std::string& path) {
  std::ifstream in(path);
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr size_t kTail = 2000;
  return Trimmed(log.size() > kTail ? log.substr(log.size() - kTail) : log);
}

// One statement on a connection of its own.
Status Execute(const std::string& uri, const std::string& sql) {
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdb(uri.c_str()), &PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    return Status::Internal("connect " + uri + ": " + Trimmed(PQerrorMessage(conn.get())));
  }
  std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(conn.get(), sql.c_str()), &PQclear);
  if (PQresultStatus(result.get()) != PGRES_COMMAND_OK) {
    return Status::Internal(sql + ": " + Trimmed(PQerrorMessage(conn.get())));
  }
  return Status::Ok();
}

}  // namespace

// What Shared keeps for the whole process; its destructor, at exit, stops the server.
struct PostgresServer::Owner {
  PostgresServer* server = nullptr;
  std::string why;

  Owner() {
    Result<PostgresServer*> launched = Launch();
    if (launched.ok()) {
      server = *launched;
    } else {
      why = "cannot start the test PostgreSQL server: " + launched.status().message();
    }
  }
  ~Owner() { delete server; }
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;
};

PostgresServer* PostgresServer::Shared(std::string* why) {
  // A function's static: concurrent first calls wait for the one start. A failure is kept too, so
  // every test of the process reports it without trying again.
  static Owner owner;
  if (owner.server == nullptr && why != nullptr) *why = owner.why;
  return owner.server;
}

PostgresServer::PostgresServer(std::string bin_dir, std::string dir, std::string user, bool as_nobody)
    : bin_dir_(std::move(bin_dir)),
      dir_(std::move(dir)),
      user_(std::move(user)),
      as_nobody_(as_nobody),
      creator_(::getpid()) {}

PostgresServer::~PostgresServer() {
  if (::getpid() != creator_) return;
  std::error_code ignored;
  // Should the stop fail, removing the directory still ends the server: a postmaster checks its
  // postmaster.pid every minute and shuts down when it is gone.
  if (std::filesystem::exists(DataDir() + "/postmaster.pid", ignored)) (void)Stop("immediate");
  if (KeepRequested()) {
    std::filesystem::remove(dir_ + "/owner", ignored);  // so that StopAbandoned leaves it
    std::cerr << "kept " << dir_ << " (PostgreSQL's log: " << dir_ << "/log)\n";
    return;
  }
  std::filesystem::remove_all(dir_, ignored);
}

Result<PostgresServer*> PostgresServer::Launch() {
  CAIRN_ASSIGN_OR_RETURN(std::string bin_dir, FindBinDir());
  const bool as_nobody = ::geteuid() == 0;
  CAIRN_ASSIGN_OR_RETURN(std::string user, ServerUser(as_nobody));
  StopAbandoned(bin_dir, as_nobody);
  CAIRN_ASSIGN_OR_RETURN(std::string dir, MakeDirectory(as_nobody));
  // From here a failure stops what started and removes the directory (a lambda, because the
  // destructor is private).
  auto discard = [](PostgresServer* server) { delete server; };
  std::unique_ptr<PostgresServer, decltype(discard)> server(
      new PostgresServer(std::move(bin_dir), std::move(dir), std::move(user), as_nobody), discard);
  CAIRN_RETURN_IF_ERROR(server->InitDb());
  CAIRN_RETURN_IF_ERROR(server->Start());
  return server.release();
}

Status PostgresServer::InitDb() {
  // --no-sync: a throwaway cluster need not survive a power cut, and syncing its files is most
  // of initdb's time.
  return RunTool(bin_dir_ + "/initdb", as_nobody_,
                 {"-D", DataDir(), "--auth=trust", "-U", user_, "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
                  "--no-instructions"});
}

Status PostgresServer::Start() {
  // No TCP listener at all (listen_addresses empty): only the socket in our directory. Durability
  // is off, as nothing here must survive the machine.
  const std::string options = "-c listen_addresses='' -k " + dir_ +
                              " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
                              " -c max_connections=200 -p " + std::to_string(kPort);
  Status started = RunTool(bin_dir_ + "/pg_ctl", as_nobody_,
                           {"-w", "-D", DataDir(), "-l", dir_ + "/log", "-o", options, "start"});
  if (started.ok()) return started;
  return Status::Internal(started.message() + "\nserver log:\n" + LogTail(dir_ + "/log"));
}

Status PostgresServer::Stop(std::string_view mode) {
  return RunTool(bin_dir_ + "/pg_ctl", as_nobody_, {"-w", "-D", DataDir(), "-m", std::string(mode), "stop"});
}

Result<std::string> PostgresServer::CreateDatabase() {
  std::shared_lock lock(restarting_);
  const std::string name = "cairn_test_" + std::to_string(++databases_);
  CAIRN_RETURN_IF_ERROR(Execute(AdminUri(), "CREATE DATABASE " + name));
  return UriFor(name);
}

std::string PostgresServer::AdminUri() const { return UriFor("postgres"); }

Status PostgresServer::Restart() {
  std::unique_lock lock(restarting_);
  CAIRN_RETURN_IF_ERROR(Stop("fast"));
  return Start();
}

std::string PostgresServer::UriFor(std::string_view database) const {
  // mkdtemp's names need no escaping in a URI.
  return "postgresql:///" + std::string(database) + "?host=" + dir_ + "&port=" + std::to_string(kPort) +
         "&user=" + user_;
}

}  // namespace cairn::test_support
