#include "support/pg_database.h"

#include "support/postgres_server.h"

namespace cairn::test_support {

Result<std::shared_ptr<store::postgres::PgDatabase>> OpenFreshPgDatabase(MetricsRegistry* metrics, std::string* uri) {
  std::string why;
  PostgresServer* server = PostgresServer::Shared(&why);
  if (server == nullptr) return Status::Unavailable("no PostgreSQL server for the test: " + why);
  CAIRN_ASSIGN_OR_RETURN(std::string created, server->CreateDatabase());
  if (uri) *uri = created;
  return OpenPgDatabase(created, metrics);
}

Result<std::shared_ptr<store::postgres::PgDatabase>> OpenPgDatabase(const std::string& uri, MetricsRegistry* metrics) {
  store::postgres::PgOptions options;
  options.uri = uri;
  return store::postgres::PgDatabase::Open(options, metrics);
}

}  // namespace cairn::test_support
