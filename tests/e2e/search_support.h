// The fixture of the search tests (search_vector_test, search_models_test): a server and its
// /search/status, and an OpenAI-compatible embeddings endpoint in this process.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "e2e_support.h"
#include "search/hashing_embedder.h"
#include "support/loopback_http_server.h"

namespace cairn::e2e {

using Names = std::vector<std::string>;
constexpr std::chrono::seconds kDeadline(30);

class SearchServerTest : public ServerTest {
 protected:
  json::object Status() {
    Response r = client().Get("/search/status");
    EXPECT_EQ(r.status, 200) << r.Describe();
    return ObjectOf(r);
  }
  json::object Model() {
    json::object status = Status();
    if (!status.contains("models") || status.at("models").as_array().empty()) return {};
    return status.at("models").as_array().at(0).as_object();
  }
  ::testing::AssertionResult CaughtUp() { return SearchCaughtUp(client(), kDeadline); }
  Names Titles(const std::string& query) {
    Response r = client().Get("/breadcrumbs/search?" + query);
    EXPECT_EQ(r.status, 200) << query << ": " << r.Describe();
    Names titles;
    json::object out = ObjectOf(r);
    if (!out.contains("items")) return titles;
    for (const auto& item : out.at("items").as_array()) titles.push_back(StringAt(item.as_object(), "title"));
    return titles;
  }
};

// An OpenAI-compatible embeddings endpoint in this process: vectors from the built-in hashing (64
// dimensions), so results are predictable. While `hold` is set it takes requests and never
// answers them, so the server's backlog stays.
class EmbeddingEndpoint {
 public:
  EmbeddingEndpoint()
      : server_([this](int, const test_support::ReceivedRequest& req, test_support::HttpConnection& c) {
          if (hold.load()) {
            c.WaitClosed();
            return;
          }
          json::array data;
          const json::value body = json::parse(req.body);
          const json::array& input = body.at("input").as_array();
          for (size_t i = 0; i < input.size(); ++i) {
            json::array embedding;
            for (float x : embedder_.EmbedOne(std::string(input[i].as_string()))) embedding.emplace_back(x);
            data.emplace_back(json::object{{"index", i}, {"embedding", std::move(embedding)}});
          }
          c.Send(test_support::HttpResponse(200, "OK", {"Content-Type: application/json"},
                                            JsonText(json::object{{"data", std::move(data)}})));
        }) {}
  std::string Url() const { return server_.Url("/v1"); }
  test_support::LoopbackHttpServer& server() { return server_; }
  std::atomic<bool> hold{false};

 private:
  search::HashingEmbedder embedder_{64};
  test_support::LoopbackHttpServer server_;
};

}  // namespace cairn::e2e
