#include "e2e_support.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <ctime>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

namespace cairn::e2e {

void ServerTest::SetUp() {
  std::vector<std::string> args = ServerArgs();
  if (builtin_tools_) args.push_back("--builtin-tools=true");
  server_ = std::make_unique<ServerProcess>(args);
  ASSERT_TRUE(server_->Start()) << server_->error();
  client_ = std::make_unique<HttpClient>(server_->port());
}

void ServerTest::TearDown() {
  if (HasFailure() && server_) {
    std::cerr << "--- cairn log (" << server_->root_dir() << ") ---\n" << server_->LogTail() << "\n--- end ---\n";
  }
  client_.reset();
  server_.reset();
}

void ServerTest::Reconnect() { client_ = std::make_unique<HttpClient>(server_->port()); }

json::object ServerTest::CreateOk(const json::value& body, const Headers& headers) {
  Response r = client().Post("/breadcrumbs", json::serialize(body), headers);
  EXPECT_EQ(r.status, 201) << "POST /breadcrumbs " << json::serialize(body) << " -> " << r.Describe();
  if (r.status != 201) return {};
  return ObjectOf(r);
}

json::object ServerTest::FullOk(const std::string& id) {
  Response r = client().Get("/breadcrumbs/" + id + "/full");
  EXPECT_EQ(r.status, 200) << "GET /breadcrumbs/" << id << "/full -> " << r.Describe();
  if (r.status != 200) return {};
  return ObjectOf(r);
}

json::object ServerTest::PatchOk(const std::string& id, const json::value& body, const Headers& headers) {
  Response r = client().Patch("/breadcrumbs/" + id, json::serialize(body), headers);
  EXPECT_EQ(r.status, 200) << "PATCH /breadcrumbs/" << id << " " << json::serialize(body) << " -> " << r.Describe();
  if (r.status != 200) return {};
  return ObjectOf(r);
}

std::vector<json::object> ServerTest::ListAll(const std::string& query, int limit, int* pages) {
  return ListPages(query.empty() ? "/breadcrumbs" : "/breadcrumbs?" + query, limit, pages);
}

std::vector<json::object> ServerTest::ListPages(const std::string& path, int limit, int* pages) {
  std::vector<json::object> items;
  std::set<std::string> cursors;
  std::optional<std::string> cursor;
  int page_count = 0;
  const char* sep = path.find('?') == std::string::npos ? "?" : "&";
  while (true) {
    std::string target = path + sep + "limit=" + std::to_string(limit);
    if (cursor) target += "&cursor=" + UrlEncode(*cursor);
    Response r = client().Get(target);
    if (r.status != 200) {
      ADD_FAILURE() << "GET " << target << " -> " << r.Describe();
      break;
    }
    ++page_count;
    json::object page = ObjectOf(r);
    const json::value* list = page.if_contains("items");
    if (list == nullptr || !list->is_array()) {
      ADD_FAILURE() << "GET " << target << ": no items array: " << r.body;
      break;
    }
    if (list->as_array().size() > static_cast<size_t>(limit)) {
      ADD_FAILURE() << "GET " << target << ": " << list->as_array().size() << " items for limit " << limit;
    }
    for (const auto& item : list->as_array()) {
      if (item.is_object()) items.push_back(item.as_object());
    }
    const json::value* next = page.if_contains("next_cursor");
    if (next == nullptr) {
      ADD_FAILURE() << "GET " << target << ": no next_cursor key";
      break;
    }
    if (next->is_null()) break;
    if (!next->is_string()) {
      ADD_FAILURE() << "next_cursor is neither null nor a string: " << json::serialize(*next);
      break;
    }
    cursor = std::string(next->as_string());
    if (!cursors.insert(*cursor).second) {
      ADD_FAILURE() << "next_cursor repeats: " << *cursor;
      break;
    }
    if (page_count > 100000) {
      ADD_FAILURE() << "too many pages";
      break;
    }
  }
  if (pages != nullptr) *pages = page_count;
  return items;
}

std::vector<std::string> ServerTest::ListIds(const std::string& query, int limit) {
  std::vector<std::string> ids;
  for (const auto& item : ListAll(query, limit)) ids.push_back(StringAt(item, "id"));
  return ids;
}

std::vector<std::string> ServerTest::StoreSnapshot() {
  std::vector<std::string> out;
  for (const auto& item : ListAll("order=asc", 1000)) {
    std::string line = StringAt(item, "id") + " v" + std::to_string(IntAt(item, "version")) + " " +
                       StringAt(item, "checksum") + " " + StringAt(item, "updated_at") + " " +
                       StringAt(item, "title");
    if (const auto* tags = item.if_contains("tags")) line += " " + json::serialize(*tags);
    out.push_back(std::move(line));
  }
  return out;
}

::testing::AssertionResult IsError(const Response& response, long status, const std::string& code,
                                   const std::optional<std::string>& field) {
  auto fail = [&](const std::string& why) {
    return ::testing::AssertionFailure() << why << "; expected " << status << " " << code
                                         << (field ? " field " + *field : std::string()) << ", got "
                                         << response.Describe();
  };
  if (response.status != status) return fail("wrong status");
  auto content_type = response.Header("content-type");
  if (!content_type || content_type->find("application/json") == std::string::npos) {
    return fail("error body is not Content-Type application/json (" + content_type.value_or("absent") + ")");
  }
  json::value body = response.Json();
  if (!body.is_object()) return fail("body is not a JSON object");
  const json::value* error = body.as_object().if_contains("error");
  if (error == nullptr || !error->is_object()) return fail("no \"error\" object");
  const json::value* got_code = error->as_object().if_contains("code");
  const json::value* message = error->as_object().if_contains("message");
  if (got_code == nullptr || !got_code->is_string()) return fail("error.code is not a string");
  if (message == nullptr || !message->is_string() || message->as_string().empty()) {
    return fail("error.message is not a non-empty string");
  }
  if (got_code->as_string() != code) return fail("wrong error.code");
  if (field) {
    const json::value* got_field = error->as_object().if_contains("field");
    if (got_field == nullptr || !got_field->is_string()) return fail("error.field is not a string");
    std::string f(got_field->as_string());
    if (!field->empty() && field->back() == '*') {
      std::string prefix = field->substr(0, field->size() - 1);
      if (f.compare(0, prefix.size(), prefix) != 0) return fail("error.field does not start with " + prefix);
    } else if (f != *field) {
      return fail("wrong error.field");
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult IsClientError(const Response& response) {
  if (response.status < 400 || response.status > 499) {
    return ::testing::AssertionFailure() << "expected a 4xx, got " << response.Describe();
  }
  json::value body = response.Json();
  const json::value* error = body.is_object() ? body.as_object().if_contains("error") : nullptr;
  if (error == nullptr || !error->is_object() || !error->as_object().contains("code") ||
      !error->as_object().at("code").is_string() || !error->as_object().contains("message")) {
    return ::testing::AssertionFailure() << "not a JSON error body: " << response.Describe();
  }
  return ::testing::AssertionSuccess();
}

json::object ObjectOf(const Response& response) {
  json::value v = response.Json();
  if (!v.is_object()) {
    ADD_FAILURE() << "expected a JSON object body, got " << response.Describe();
    return {};
  }
  return v.as_object();
}

std::string StringAt(const json::object& obj, std::string_view key) {
  const json::value* v = obj.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

int64_t IntAt(const json::object& obj, std::string_view key) {
  const json::value* v = obj.if_contains(key);
  if (v == nullptr) return -1;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->as_uint64());
  return -1;
}

namespace {
std::string Hex(const unsigned char* digest, unsigned int length) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0x0F]);
  }
  return out;
}
}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  return Hex(digest, length);
}

std::string HmacSha256Hex(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), mac, &length);
  return Hex(mac, length);
}

std::string JsonText(const json::value& value) { return json::serialize(value); }

double MetricValue(const std::string& prometheus_text, const std::string& name) {
  std::istringstream lines(prometheus_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  }
  return -1;
}

double MetricSum(const std::string& prometheus_text, const std::string& name) {
  std::istringstream lines(prometheus_text);
  double sum = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + " ", 0) != 0 && line.rfind(name + "{", 0) != 0) continue;
    size_t space = line.rfind(' ');
    if (space != std::string::npos) sum += std::stod(line.substr(space + 1));
  }
  return sum;
}

::testing::AssertionResult AwaitMetric(int port, const std::string& name, double value,
                                       std::chrono::seconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  HttpClient client(port);
  double last = -1;
  while (std::chrono::steady_clock::now() < until) {
    last = MetricSum(client.Get("/metrics").body, name);
    if (last == value) return ::testing::AssertionSuccess();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a poll, with a deadline
  }
  return ::testing::AssertionFailure() << name << " is " << last << ", not " << value << ", after " << deadline.count()
                                       << " s";
}

::testing::AssertionResult SearchCaughtUp(HttpClient& client, std::chrono::seconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  std::string last;
  while (std::chrono::steady_clock::now() < until) {
    Response r = client.Get("/search/status");
    last = r.Describe();
    const json::value status = r.Json();
    const json::value* models = status.is_object() ? status.as_object().if_contains("models") : nullptr;
    if (models && models->is_array() && !models->as_array().empty() &&
        IntAt(models->as_array().front().as_object(), "backlog") == 0) {
      return ::testing::AssertionSuccess();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a poll, with a deadline
  }
  return ::testing::AssertionFailure() << "the embedding backlog did not reach 0: " << last;
}

std::string Rfc3339Utc(std::chrono::system_clock::time_point t) {
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(micros / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(micros % 1000000));
  return buf;
}

}  // namespace cairn::e2e
