// Secret references (docs/secrets.md): wherever a definition holds a credential — an http tool's
// or webhook's header, a webhook's signing secret, an agent's API key, a process tool's
// secret_env — it may name one of its tenant's secrets instead of holding the value:
//
//   {"secret": "NAME"}                      the value of secret NAME
//   {"secret": "NAME", "prefix": "Bearer "} (headers only) the prefix, then the value
//
// The reference is stored; the value is looked up when it is used (each call, each delivery), so
// a rotation applies to the next use and the value is never written anywhere. This file holds the
// one parser of that shape, the one resolver (which adds every value it hands out to a
// SecretRedactor) and the headers map the http tools and webhooks share.
#pragma once

#include <boost/json/value.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/secret_redactor.h"
#include "base/status.h"

namespace cairn::model {

// A value given literally, or a reference to a tenant's secret (with an optional literal prefix).
struct SecretOrValue {
  std::string value;        // the literal (secret_name empty), or the prefix of a reference
  std::string secret_name;  // non-empty: a reference

  bool is_reference() const { return !secret_name.empty(); }
  bool operator==(const SecretOrValue&) const = default;
};

// How the value of a tenant's secret is found (auth::SecretStore::Resolve): kNotFound when the
// tenant has no secret of that name.
using SecretResolver = std::function<Result<std::string>(const std::string& tenant, const std::string& name)>;

// Whether `name` is a valid secret name: 1 to 128 of A-Z a-z 0-9 _ . - (not "." or "..").
bool IsValidSecretName(std::string_view name);

// Whether `value` is an object with a "secret" member: meant as a reference (and then checked as
// one, so a malformed reference is never taken for a literal).
bool LooksLikeSecretReference(const boost::json::value& value);

// {"secret": NAME} (and, with `allow_prefix`, an optional "prefix" string) → the reference;
// kValidation naming `field` (or `field.secret` / `field.prefix`) for anything else.
Result<SecretOrValue> ParseSecretReference(const boost::json::value& value, const std::string& field,
                                           bool allow_prefix = false);

// A string of 1..max_bytes without line breaks or NUL (a literal), or a reference (with prefix
// when `allow_prefix`); kValidation naming `field`.
Result<SecretOrValue> ParseSecretOrValue(const boost::json::value& value, const std::string& field, size_t max_bytes,
                                         bool allow_prefix);

// The JSON a definition stores: the literal string, or {"secret": NAME[, "prefix": P]}.
boost::json::value SecretOrValueToJson(const SecretOrValue& value);

// Request headers a client gives (http tools, webhooks): an object of at most 32 names (HTTP
// tokens, at most 256 bytes) to values (ParseSecretOrValue, at most 8 KiB, prefix allowed).
// Names cairn sets itself (Content-Type, Content-Length, Host, Transfer-Encoding, Connection and
// every X-Cairn-* / X-RCRT-*) are refused, as are duplicates that differ only in case.
// kValidation naming `field.<name>`.
using HeaderList = std::vector<std::pair<std::string, SecretOrValue>>;
Result<HeaderList> ParseHeaderList(const boost::json::value& value, const std::string& field);
boost::json::value HeaderListToJson(const HeaderList& headers);

// The value of `given` in `tenant`: the literal, or prefix + the secret's value, which is added
// to `redact` (when not null) under its label. A tenant without that secret is kNotFound with
// reason "secret_not_found" naming the secret and `where` (e.g. "header Authorization"); no
// resolver is kFailedPrecondition with the same reason.
Result<std::string> ResolveSecretOrValue(const SecretOrValue& given, const std::string& tenant,
                                         const SecretResolver& resolve, const std::string& where,
                                         SecretRedactor* redact);

// The headers with every reference resolved (ResolveSecretOrValue for each).
Result<std::vector<std::pair<std::string, std::string>>> ResolveHeaders(const HeaderList& headers,
                                                                        const std::string& tenant,
                                                                        const SecretResolver& resolve,
                                                                        SecretRedactor* redact);

}  // namespace cairn::model
