// Unit tests of the pure parts of webhook delivery: signature, retry schedule, classification,
// URL validation and body parsing.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <map>

#include "server/webhooks/delivery_policy.h"
#include "server/webhooks/webhook_codec.h"
#include "server/webhooks/webhook_sender.h"
#include "server/webhooks/webhook_signature.h"
#include "server/webhooks/webhook_url.h"

namespace cairn::server::webhooks {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

TEST(WebhookSignature, MatchesRfc4231Vectors) {
  EXPECT_EQ(HmacSha256Hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(HmacSha256Hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(SignatureHeader("Jefe", "what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(HmacSha256Hex("", "").size(), 64u);
}

TEST(WebhookSignature, DeliveryRequestCarriesHeadersAndSignsTheExactBody) {
  store::Webhook hook;
  hook.url = "http://127.0.0.1:1/x";
  hook.secret = "s3cret";
  WebhookRequest request = BuildDeliveryRequest(hook, 42, R"({"seq":42})", milliseconds(1234)).value();
  EXPECT_EQ(request.url, hook.url);
  EXPECT_EQ(request.body, R"({"seq":42})");
  EXPECT_EQ(request.timeout, milliseconds(1234));
  auto header = [&](const std::string& name) -> std::string {
    for (const auto& [n, v] : request.headers) {
      if (n == name) return v;
    }
    return "<absent>";
  };
  EXPECT_EQ(header("Content-Type"), "application/json");
  EXPECT_EQ(header("X-Cairn-Event-Id"), "42");
  EXPECT_EQ(header("X-Cairn-Signature"), SignatureHeader("s3cret", R"({"seq":42})"));
  EXPECT_EQ(header("X-RCRT-Signature"), SignatureHeader("s3cret", R"({"seq":42})"));  // the reference's name (docs/rcrt.md)
  hook.secret.reset();
  request = BuildDeliveryRequest(hook, 42, "{}", milliseconds(1)).value();
  for (const auto& [n, v] : request.headers) {
    EXPECT_NE(n, "X-Cairn-Signature");
    EXPECT_NE(n, "X-RCRT-Signature");
  }
}

// References are resolved in the hook's tenant at each build; the values land in the redactor.
TEST(WebhookSignature, ReferencedSecretsAreResolvedWhenTheDeliveryIsBuilt) {
  store::Webhook hook;
  hook.owner_id = "acme";
  hook.url = "http://127.0.0.1:1/x";
  hook.secret_name = "SIGN";
  hook.headers = json::parse(R"({"Authorization":{"secret":"TOKEN","prefix":"Bearer "},"X-Plain":"p"})");
  std::map<std::string, std::string> secrets{{"SIGN", "sign-value-1"}, {"TOKEN", "token-value-1"}};
  model::SecretResolver resolve = [&secrets](const std::string& tenant, const std::string& name) -> Result<std::string> {
    auto it = secrets.find(name);
    if (tenant != "acme" || it == secrets.end()) return Status::NotFound("no " + name);
    return it->second;
  };
  auto built = BuildDeliveryRequest(hook, 7, "{}", milliseconds(1), resolve);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  std::map<std::string, std::string> headers(built->headers.begin(), built->headers.end());
  EXPECT_EQ(headers["Authorization"], "Bearer token-value-1");
  EXPECT_EQ(headers["X-Plain"], "p");
  EXPECT_EQ(headers["X-Cairn-Signature"], SignatureHeader("sign-value-1", "{}"));
  EXPECT_EQ(built->redact("sent token-value-1 and sign-value-1"), "sent [secret:TOKEN] and [secret:SIGN]");
  secrets["SIGN"] = "sign-value-2";  // rotated: the next delivery signs with the new value
  auto rotated = BuildDeliveryRequest(hook, 8, "{}", milliseconds(1), resolve);
  ASSERT_TRUE(rotated.ok());
  std::map<std::string, std::string> rotated_headers(rotated->headers.begin(), rotated->headers.end());
  EXPECT_EQ(rotated_headers["X-Cairn-Signature"], SignatureHeader("sign-value-2", "{}"));
  secrets.erase("TOKEN");
  auto missing = BuildDeliveryRequest(hook, 9, "{}", milliseconds(1), resolve);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().reason(), "secret_not_found");
  EXPECT_EQ(BuildFailureText(missing.status()).rfind("secret_not_found: ", 0), 0u);
}

TEST(DeliveryPolicy, ClassifiesStatuses) {
  EXPECT_EQ(Classify(200), AttemptVerdict::kDelivered);
  EXPECT_EQ(Classify(204), AttemptVerdict::kDelivered);
  EXPECT_EQ(Classify(0), AttemptVerdict::kRetry);
  EXPECT_EQ(Classify(408), AttemptVerdict::kRetry);
  EXPECT_EQ(Classify(429), AttemptVerdict::kRetry);
  EXPECT_EQ(Classify(500), AttemptVerdict::kRetry);
  EXPECT_EQ(Classify(503), AttemptVerdict::kRetry);
  EXPECT_EQ(Classify(400), AttemptVerdict::kPermanent);
  EXPECT_EQ(Classify(404), AttemptVerdict::kPermanent);
  EXPECT_EQ(Classify(410), AttemptVerdict::kPermanent);
  EXPECT_EQ(Classify(301), AttemptVerdict::kPermanent);
}

TEST(DeliveryPolicy, BackoffDoublesWithEqualJitterUpToTheCap) {
  RetryPolicy policy{6, milliseconds(1000), milliseconds(10000)};
  // random01 = 1: the full exponential delay; 0: half of it.
  EXPECT_EQ(BackoffDelay(policy, 1, std::nullopt, 1.0), milliseconds(1000));
  EXPECT_EQ(BackoffDelay(policy, 2, std::nullopt, 1.0), milliseconds(2000));
  EXPECT_EQ(BackoffDelay(policy, 3, std::nullopt, 1.0), milliseconds(4000));
  EXPECT_EQ(BackoffDelay(policy, 4, std::nullopt, 1.0), milliseconds(8000));
  EXPECT_EQ(BackoffDelay(policy, 5, std::nullopt, 1.0), milliseconds(10000));
  EXPECT_EQ(BackoffDelay(policy, 60, std::nullopt, 1.0), milliseconds(10000));  // no overflow
  EXPECT_EQ(BackoffDelay(policy, 1, std::nullopt, 0.0), milliseconds(500));
  EXPECT_EQ(BackoffDelay(policy, 3, std::nullopt, 0.0), milliseconds(2000));
  EXPECT_EQ(BackoffDelay(policy, 3, std::nullopt, 0.5), milliseconds(3000));
  EXPECT_EQ(BackoffDelay(policy, 5, std::nullopt, 0.0), milliseconds(5000));
  EXPECT_EQ(BackoffDelay(policy, 1, std::nullopt, 7.0), milliseconds(1000));  // clamped
}

TEST(DeliveryPolicy, RetryAfterWinsButIsCapped) {
  RetryPolicy policy{6, milliseconds(20), milliseconds(5000)};
  EXPECT_EQ(BackoffDelay(policy, 1, 3, 0.0), milliseconds(3000));
  EXPECT_EQ(BackoffDelay(policy, 1, 0, 0.7), milliseconds(0));
  EXPECT_EQ(BackoffDelay(policy, 1, 3600, 0.0), milliseconds(5000));
  EXPECT_EQ(ParseRetryAfter(" 120\r\n"), std::optional<int64_t>(120));
  EXPECT_EQ(ParseRetryAfter("0"), std::optional<int64_t>(0));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("-1"), std::nullopt);
  EXPECT_EQ(ParseRetryAfter(""), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("99999999999999"), std::nullopt);
}

TEST(WebhookUrl, AcceptsHttpAndHttps) {
  EXPECT_TRUE(ValidateWebhookUrl("http://127.0.0.1:8080/hook").ok());
  EXPECT_TRUE(ValidateWebhookUrl("https://example.com/a/b?x=1").ok());
  EXPECT_TRUE(ValidateWebhookUrl("HTTPS://example.com").ok());
  EXPECT_TRUE(ValidateWebhookUrl("http://[::1]:9000/").ok());
}

TEST(WebhookUrl, RefusesEverythingElse) {
  for (const char* bad : {"", "example.com/hook", "/relative", "ftp://example.com/", "file:///etc/passwd",
                          "http://", "http:///path", "http://user:pw@example.com/", "http://example.com/#frag",
                          "http://example.com:99999/", "http://exa mple.com/", "javascript:alert(1)",
                          "gopher://example.com"}) {
    Status s = ValidateWebhookUrl(bad);
    EXPECT_EQ(s.code(), StatusCode::kValidation) << bad;
    EXPECT_EQ(s.field(), "url") << bad;
  }
  EXPECT_FALSE(ValidateWebhookUrl("http://example.com/" + std::string(kMaxWebhookUrlBytes, 'a')).ok());
}

TEST(WebhookCodec, ParsesDraftsStrictly) {
  model::Limits limits;
  auto draft = ParseWebhookDraft(json::parse(R"({"url":"http://h/x","selector":{"any_tags":["a"]},"secret":"k"})"),
                                 limits, "default");
  ASSERT_TRUE(draft.ok()) << draft.status().ToString();
  EXPECT_EQ(draft->url, "http://h/x");
  EXPECT_EQ(draft->secret, std::optional<std::string>("k"));
  EXPECT_TRUE(draft->active);
  EXPECT_EQ(draft->selector, json::parse(R"({"any_tags":["a"]})"));

  auto field_of = [&](std::string_view body) {
    auto parsed = ParseWebhookDraft(json::parse(body), limits, "default");
    return parsed.ok() ? std::string("<ok>") : parsed.status().field();
  };
  EXPECT_EQ(field_of(R"({"selector":{}})"), "url");
  EXPECT_EQ(field_of(R"({"url":"ftp://h/"})"), "url");
  EXPECT_EQ(field_of(R"({"url":"http://h/","extra":1})"), "extra");
  EXPECT_EQ(field_of(R"({"url":"http://h/","secret":""})"), "secret");
  EXPECT_EQ(field_of(R"({"url":"http://h/","secret":5})"), "secret");
  EXPECT_EQ(field_of(R"({"url":"http://h/","active":"yes"})"), "active");
  EXPECT_EQ(field_of(R"({"url":"http://h/","selector":{"types":["nope"]}})").rfind("selector.types", 0), 0u);
  EXPECT_EQ(field_of(R"({"url":"http://h/","selector":{"bogus":1}})").rfind("selector", 0), 0u);
  EXPECT_EQ(field_of(R"([])"), "body");
}

TEST(WebhookCodec, PatchAndViewsNeverShowTheSecret) {
  model::Limits limits;
  EXPECT_FALSE(ParseWebhookPatch(json::parse("{}"), limits).ok());
  auto patch = ParseWebhookPatch(json::parse(R"({"secret":null,"active":false})"), limits);
  ASSERT_TRUE(patch.ok());
  ASSERT_TRUE(patch->secret.has_value());
  EXPECT_FALSE(patch->secret->has_value());
  EXPECT_EQ(patch->active, std::optional<bool>(false));

  store::Webhook hook;
  hook.id = "h1";
  hook.url = "http://h/x";
  hook.selector = json::object{};
  hook.secret = "do-not-show";
  json::object view = WebhookView(hook);
  EXPECT_EQ(view.at("has_secret"), json::value(true));
  EXPECT_FALSE(view.contains("secret"));
  EXPECT_EQ(json::serialize(view).find("do-not-show"), std::string::npos);
}

}  // namespace
}  // namespace cairn::server::webhooks
