// A change of embedding model against the real binary: restarted with another model (and
// dimension), the server embeds every record for it in the background while the previous model's
// vectors keep answering; once caught up the new model serves and the old vectors and saved index
// are deleted. A kill -9 in the middle loses nothing.
#include <filesystem>
#include <fstream>
#include <thread>

#include "search/hashing_embedder.h"
#include "search_support.h"

namespace cairn::e2e {
namespace {

constexpr const char* kOld = "builtin/hash-384";
constexpr const char* kNew = "custom/test-embed";

class e2e_search_models : public SearchServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override { return {"--hnsw-min-vectors", "1"}; }

  // The status's models (configured first), an array of one empty object when it has none.
  static json::array Models(const json::object& status) {
    const json::value* models = status.if_contains("models");
    if (models == nullptr || !models->is_array() || models->as_array().empty()) return json::array{json::object{}};
    return models->as_array();
  }
  // Polls the status (with a deadline) until `done` holds of it.
  template <typename Done>
  ::testing::AssertionResult StatusUntil(Done done, const std::string& what) {
    const auto until = std::chrono::steady_clock::now() + kDeadline;
    json::object last;
    while (std::chrono::steady_clock::now() < until) {
      last = Status();
      if (done(last)) return ::testing::AssertionSuccess();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a poll, with a deadline
    }
    return ::testing::AssertionFailure() << what << ": " << JsonText(last);
  }
  // The vector search's answer to `query` (200 expected).
  std::string FirstId(const std::string& query) {
    Response r = client().Get("/breadcrumbs/search?mode=vector&limit=1&" + query);
    EXPECT_EQ(r.status, 200) << query << ": " << r.Describe();
    json::object out = ObjectOf(r);
    if (!out.contains("items") || out.at("items").as_array().empty()) return "";
    return StringAt(out.at("items").as_array().at(0).as_object(), "id");
  }
  static std::string QueryVector(size_t dimension, const std::string& text) {
    json::array qvec;
    for (float x : search::HashingEmbedder(dimension).EmbedOne(text)) qvec.emplace_back(x);
    return "qvec=" + UrlEncode(JsonText(qvec));
  }
  // The models whose indexes are saved in the data dir.
  std::vector<std::string> SavedIndexModels() {
    std::vector<std::string> models;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(server().data_dir() + "/vector-index", error)) {
      if (entry.path().extension() != ".json") continue;
      std::ifstream in(entry.path());
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      models.push_back(StringAt(json::parse(text).as_object(), "model"));
    }
    return models;
  }

  EmbeddingEndpoint endpoint_;
};

TEST_F(e2e_search_models, TheOldModelServesUntilTheNewOneCaughtUpThenItsVectorsGo) {
  std::vector<std::string> ids;
  const std::vector<std::string> texts = {"boats in the Lisbon harbour", "quarterly filing deadlines",
                                          "sourdough starter feeding", "chess opening repertoire",
                                          "tram 28 timetable", "olive oil tasting notes"};
  for (size_t i = 0; i < texts.size(); ++i) {
    ids.push_back(StringAt(CreateOk(json::object{{"title", "note " + std::to_string(i)}, {"context", {{"text", texts[i]}}}}), "id"));
  }
  ASSERT_TRUE(CaughtUp());
  EXPECT_EQ(FirstId("q=quarterly+filing+deadlines"), ids[1]);  // builds the index, saved at the stop
  ASSERT_EQ(server().Stop(), 0);
  EXPECT_EQ(SavedIndexModels(), std::vector<std::string>{kOld});

  // Restarted with another model and dimension, whose endpoint holds every request for now.
  endpoint_.hold = true;
  server().AppendArgs({"--embedder", kNew, "--llm-base-url", endpoint_.Url(), "--embed-batch-size", "4",
                       "--embed-timeout-ms", "500"});
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  ASSERT_TRUE(endpoint_.server().WaitForRequests(1, kDeadline));  // the new model is filling in
  json::object status = Status();
  EXPECT_EQ(StringAt(status, "serving"), kOld) << JsonText(status);
  ASSERT_EQ(Models(status).size(), 2u) << JsonText(status);
  json::object fresh = Models(status).at(0).as_object();
  EXPECT_EQ(StringAt(fresh, "model"), kNew);
  EXPECT_EQ(fresh.at("serving"), false);
  EXPECT_GT(IntAt(fresh, "backlog"), 0);
  EXPECT_EQ(IntAt(fresh, "vectors"), 0);
  json::object old = Models(status).at(1).as_object();
  EXPECT_EQ(old.at("serving"), true);
  EXPECT_EQ(IntAt(old, "vectors"), 6);
  // Vector search answers from the old vectors: queries are embedded by the old model, and a
  // caller's vector must have its dimension.
  EXPECT_EQ(FirstId("q=sourdough+starter"), ids[2]);
  EXPECT_EQ(FirstId(QueryVector(384, "note 4\ntram 28 timetable")), ids[4]);
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/search?mode=vector&" + QueryVector(64, "tram")), 400, "bad_request", "qvec"));
  // The old model follows writes meanwhile.
  ids.push_back(StringAt(CreateOk(json::object{{"title", "ferry"}, {"context", {{"text", "cacilhas ferry schedule"}}}}), "id"));
  ASSERT_TRUE(StatusUntil([](const json::object& s) { return IntAt(Models(s).back().as_object(), "backlog") == 0; },
                          "the old model did not catch up"));
  EXPECT_EQ(FirstId("q=cacilhas+ferry"), ids[6]);

  // kill -9 in the middle of the re-embedding: the old model still serves after the restart.
  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  EXPECT_EQ(StringAt(Status(), "serving"), kOld);
  EXPECT_EQ(FirstId("q=cacilhas+ferry"), ids[6]);

  // The endpoint answers: the new model catches up, serves, and the old vectors and index go.
  endpoint_.hold = false;
  ASSERT_TRUE(StatusUntil([](const json::object& s) { return Models(s).size() == 1 && StringAt(s, "serving") == kNew; },
                          "the old model was not retired"));
  json::object after = Status();
  EXPECT_EQ(StringAt(after, "serving"), kNew) << JsonText(after);
  json::object model = Models(after).at(0).as_object();
  EXPECT_EQ(IntAt(model, "vectors"), 7) << JsonText(model);
  EXPECT_EQ(IntAt(model, "dimension"), 64);
  EXPECT_EQ(IntAt(model, "backlog"), 0);
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(FirstId(QueryVector(64, "note " + std::to_string(i) + "\n" + texts[i])), ids[i]) << i;
  }
  EXPECT_EQ(FirstId("q=cacilhas+ferry"), ids[6]);
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/search?mode=vector&" + QueryVector(384, "tram")), 400, "bad_request", "qvec"));
  for (const std::string& saved : SavedIndexModels()) EXPECT_NE(saved, kOld);
}

// builtin/hash-N picks the built-in embedder's dimension; a bad N stops the start, naming it.
TEST(e2e_search_models_settings, ABadBuiltinDimensionStopsTheStart) {
  for (const char* bad : {"builtin/hash-3", "builtin/hash-4097", "builtin/hash-x"}) {
    ServerProcess server({"--embedder", bad});
    EXPECT_FALSE(server.Start()) << bad;
    EXPECT_NE(server.LogTail().find("embedder: builtin/hash-N takes a dimension N from 8 to 4096"), std::string::npos)
        << bad << ": " << server.LogTail();
  }
  ServerProcess good({"--embedder", "builtin/hash-32"});
  ASSERT_TRUE(good.Start()) << good.error();
  HttpClient client(good.port());
  Response status = client.Get("/search/status");
  ASSERT_EQ(status.status, 200) << status.Describe();
  EXPECT_EQ(StringAt(ObjectOf(status), "serving"), "builtin/hash-32");
  EXPECT_EQ(good.Stop(), 0);
}

}  // namespace
}  // namespace cairn::e2e
