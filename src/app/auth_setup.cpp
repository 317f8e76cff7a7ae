#include "app/auth_setup.h"

#include <filesystem>
#include <functional>

#include "auth/jwt.h"
#include "base/file_util.h"
#include "base/log.h"

namespace cairn::app {
namespace {

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

// A key kept in the data dir (jwt.key, master.key): made by `make` and written once (0600,
// atomically, so a crash cannot leave a part of a key that fails every later start), then read at
// every start.
Result<std::string> DataDirSecret(const std::string& data_dir, const std::string& file_name,
                                  const std::function<Result<std::string>()>& make) {
  std::string path = (std::filesystem::path(data_dir) / file_name).string();
  if (std::filesystem::exists(path)) return ReadWholeFile(path);
  CAIRN_ASSIGN_OR_RETURN(std::string secret, make());
  CAIRN_RETURN_IF_ERROR(WriteFileAtomically(path, secret, 0600));
  return secret;
}

Result<std::unique_ptr<auth::JwtCodec>> MakeJwtCodec(const Settings& settings) {
  if (const std::string& file = settings.GetString("jwt_private_key_file"); !file.empty()) {
    CAIRN_ASSIGN_OR_RETURN(std::string pem, ReadWholeFile(file));
    return auth::JwtCodec::FromPrivateKeyPem(pem);
  }
  if (const std::string& secret = settings.GetString("jwt_secret"); !secret.empty()) return auth::JwtCodec::Hs256(secret);
  CAIRN_ASSIGN_OR_RETURN(std::string secret, DataDirSecret(settings.GetString("data_dir"), "jwt.key", []() -> Result<std::string> {
    CAIRN_ASSIGN_OR_RETURN(std::string bytes, auth::RandomBytes(32));
    return auth::Base64UrlEncode(bytes);
  }));
  return auth::JwtCodec::Hs256(secret);
}

// The master key of the secrets: the master_key setting, else <data-dir>/master.key.
Result<auth::SecretBox> MakeSecretBox(const Settings& settings) {
  if (const std::string& configured = settings.GetString("master_key"); !configured.empty()) {
    CAIRN_ASSIGN_OR_RETURN(std::string key, auth::ParseMasterKey(configured, "CAIRN_MASTER_KEY (--master-key)"));
    return auth::SecretBox::FromKey(std::move(key));
  }
  CAIRN_ASSIGN_OR_RETURN(std::string hex, DataDirSecret(settings.GetString("data_dir"), "master.key", auth::NewMasterKeyHex));
  CAIRN_ASSIGN_OR_RETURN(std::string key, auth::ParseMasterKey(hex, "<data-dir>/master.key"));
  return auth::SecretBox::FromKey(std::move(key));
}

}  // namespace

Result<AuthSetup> MakeAuth(const Settings& settings, const std::string& listen_host, store::Store& store,
                           const Clock& clock) {
  AuthSetup setup;
  const std::string& mode = settings.GetString("auth");
  if (mode != "none" && mode != "on") return Status::InvalidArgument("--auth must be none or on, got '" + mode + "'");
  setup.enabled = mode == "on";
  if (!setup.enabled && !IsLoopback(listen_host)) {
    if (!settings.GetBool("insecure_no_auth")) {
      return Status::InvalidArgument("--auth=none trusts whoever reaches the port, so it listens on loopback only; "
                                     "use --auth=on (with CAIRN_BOOTSTRAP_ADMIN_KEY) to listen on " + listen_host +
                                     ", or --insecure-no-auth to accept the risk");
    }
    CAIRN_LOG_WARN("--insecure-no-auth: anyone who reaches {} may read and write everything", listen_host);
  }
  setup.keys = std::make_unique<auth::KeyRegistry>(store);
  CAIRN_RETURN_IF_ERROR(setup.keys->Load());
  if (const std::string& key = settings.GetString("bootstrap_admin_key"); !key.empty()) {
    CAIRN_RETURN_IF_ERROR(setup.keys->SetBootstrapKey(key));
  } else if (setup.enabled && setup.keys->Tenants().size() <= 1) {
    CAIRN_LOG_WARN("--auth=on without CAIRN_BOOTSTRAP_ADMIN_KEY: no one can create tenants or keys");
  }
  CAIRN_ASSIGN_OR_RETURN(auto codec, MakeJwtCodec(settings));
  setup.authenticator = std::make_unique<auth::Authenticator>(*setup.keys, std::move(codec), clock,
                                                              settings.GetInt("token_ttl_s"));
  setup.principal_rate = std::make_unique<auth::RateLimiter>(settings.GetInt("rate_limit_principal_per_minute"),
                                                             settings.GetInt("rate_limit_burst"), clock);
  setup.tenant_rate = std::make_unique<auth::RateLimiter>(settings.GetInt("rate_limit_tenant_per_minute"),
                                                          settings.GetInt("rate_limit_burst"), clock);
  CAIRN_ASSIGN_OR_RETURN(auth::SecretBox box, MakeSecretBox(settings));
  setup.secret_box = std::make_unique<auth::SecretBox>(std::move(box));
  setup.secrets = std::make_unique<auth::SecretStore>(store, *setup.secret_box);
  return setup;
}

}  // namespace cairn::app
