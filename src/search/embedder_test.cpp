// The built-in HashingEmbedder, RecordText, and the OpenAI-compatible client against a loopback
// server.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <cmath>

#include "search/hashing_embedder.h"
#include "search/openai_embedder.h"
#include "search/record_text.h"
#include "support/loopback_http_server.h"

namespace cairn::search {
namespace {

using test_support::HttpResponse;
using test_support::LoopbackHttpServer;
using test_support::ReceivedRequest;

double Norm(const std::vector<float>& v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  return std::sqrt(sum);
}

TEST(HashingEmbedderTest, DeterministicUnitVectorsCloserForSharedWords) {
  HashingEmbedder embedder;
  EXPECT_EQ(embedder.model(), "builtin/hash-384");
  EXPECT_EQ(embedder.dimension(), 384u);
  auto a = embedder.EmbedOne("The harbour lights of Lisbon");
  EXPECT_EQ(a, HashingEmbedder().EmbedOne("The harbour lights of Lisbon"));
  EXPECT_NEAR(Norm(a), 1.0, 1e-5);
  auto near = embedder.EmbedOne("lisbon harbour at night");
  auto far = embedder.EmbedOne("quarterly tax forms");
  EXPECT_GT(Cosine(a.data(), near.data(), a.size()), Cosine(a.data(), far.data(), a.size()) + 0.2);
  // Trigrams: a misspelling still lands near its word.
  auto word = embedder.EmbedOne("restaurant");
  auto typo = embedder.EmbedOne("restaurnat");
  EXPECT_GT(Cosine(word.data(), typo.data(), word.size()), 0.3);
  EXPECT_EQ(Norm(embedder.EmbedOne(" !? ")), 0.0);
  EXPECT_FALSE(embedder.Embed({}).ok());
  EXPECT_EQ(HashingEmbedder(16).EmbedOne("x").size(), 16u);
}

TEST(RecordTextTest, TitleDescriptionTagsAndContextStringsInOrderBounded) {
  model::Breadcrumb crumb;
  crumb.title = "Trip";
  crumb.description = "to the coast";
  crumb.tags = {"travel", "2026"};
  crumb.context = boost::json::parse(R"({"city":"Lisbon","n":3,"stops":[{"name":"Belem"},"Alfama"]})");
  EXPECT_EQ(RecordText(crumb), "Trip\nto the coast\ntravel 2026\nLisbon\nBelem\nAlfama");
  EXPECT_EQ(RecordText(crumb, 6), "Trip\nt");
}

// An OpenAI-compatible /v1/embeddings answering with `answer` for each request.
LoopbackHttpServer EmbeddingServer(std::function<std::string(const ReceivedRequest&)> answer) {
  return LoopbackHttpServer(test_support::Answering([answer](const ReceivedRequest& r) -> std::optional<std::string> {
    return answer(r);
  }));
}

OpenAiEmbedderOptions Options(const LoopbackHttpServer& server) {
  OpenAiEmbedderOptions options;
  options.name = "local/embed-small";
  options.base_url = server.Url("/v1/");
  options.api_key = "sk-test";
  options.model = "embed-small";
  options.timeout = std::chrono::milliseconds(5000);
  return options;
}

TEST(OpenAiEmbedderTest, PostsTheInputsAndReadsVectorsByIndex) {
  LoopbackHttpServer server([](int, const ReceivedRequest&, test_support::HttpConnection& c) {
    c.Send(HttpResponse(200, "OK", {"Content-Type: application/json"},
                        R"({"object":"list","data":[{"index":1,"embedding":[0,2]},{"index":0,"embedding":[3,4]}],
                            "model":"embed-small"})"));
  });
  OpenAiEmbedder embedder(Options(server));
  EXPECT_EQ(embedder.dimension(), 0u);
  auto vectors = embedder.Embed({"first", "second"});
  ASSERT_TRUE(vectors.ok()) << vectors.status().ToString();
  ASSERT_EQ(vectors->size(), 2u);
  EXPECT_NEAR((*vectors)[0][0], 0.6, 1e-6);  // normalised
  EXPECT_NEAR((*vectors)[0][1], 0.8, 1e-6);
  EXPECT_NEAR((*vectors)[1][1], 1.0, 1e-6);
  EXPECT_EQ(embedder.dimension(), 2u);
  EXPECT_EQ(embedder.model(), "local/embed-small");
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/v1/embeddings");
  EXPECT_EQ(requests[0].Header("authorization").value_or(""), "Bearer sk-test");
  EXPECT_EQ(boost::json::parse(requests[0].body),
            boost::json::parse(R"({"model":"embed-small","input":["first","second"]})"));
}

TEST(OpenAiEmbedderTest, FailuresSayWhetherTheyMayPass) {
  struct Case {
    std::string answer;
    StatusCode code;
  };
  const std::vector<Case> cases = {
      {HttpResponse(503, "Unavailable", {}, "busy"), StatusCode::kUnavailable},
      {HttpResponse(429, "Too Many Requests", {}, "slow down"), StatusCode::kUnavailable},
      {HttpResponse(400, "Bad Request", {}, R"({"error":"input too long"})"), StatusCode::kInternal},
      {HttpResponse(200, "OK", {}, "not json"), StatusCode::kInternal},
      {HttpResponse(200, "OK", {}, R"({"data":[{"index":0,"embedding":[1]}]})"), StatusCode::kInternal},  // 1 of 2
      {HttpResponse(200, "OK", {}, R"({"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]})"),
       StatusCode::kInternal},
      {HttpResponse(200, "OK", {}, R"({"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]})"),
       StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    LoopbackHttpServer server = EmbeddingServer([&](const ReceivedRequest&) { return c.answer; });
    OpenAiEmbedder embedder(Options(server));
    auto vectors = embedder.Embed({"a", "b"});
    ASSERT_FALSE(vectors.ok()) << c.answer;
    EXPECT_EQ(vectors.status().code(), c.code) << c.answer << " → " << vectors.status().ToString();
    EXPECT_EQ(vectors.status().message().find("sk-test"), std::string::npos);
  }
  // An endpoint (or a proxy) that echoes the key in its error: the message never carries it.
  LoopbackHttpServer echo = EmbeddingServer([](const ReceivedRequest& req) {
    return HttpResponse(401, "Unauthorized", {}, "bad key in header: " + req.Header("authorization").value_or(""));
  });
  auto refused = OpenAiEmbedder(Options(echo)).Embed({"a"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("bad key in header: Bearer ***"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find("sk-test"), std::string::npos) << refused.status().message();
  OpenAiEmbedderOptions nowhere;
  nowhere.name = "x/y";
  nowhere.base_url = "http://127.0.0.1:" + std::to_string(test_support::FreeLoopbackPort()) + "/v1";
  nowhere.timeout = std::chrono::milliseconds(2000);
  EXPECT_EQ(OpenAiEmbedder(nowhere).Embed({"a"}).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace cairn::search
