// Vector and hybrid search against the real binary: the built-in embedder, the OpenAI-compatible
// client against an embeddings endpoint in this process, and kill -9 with a backlog.
#include <atomic>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "search/hashing_embedder.h"
#include "search_support.h"

namespace cairn::e2e {
namespace {

class e2e_search_vector : public SearchServerTest {};

TEST_F(e2e_search_vector, FindsTheNearestOnceTheWorkerCaughtUp) {
  CreateOk(json::parse(R"({"title":"harbour lights","schema_name":"note.v1","context":{"text":"boats in the Lisbon harbour at night"}})"));
  CreateOk(json::parse(R"({"title":"tax forms","schema_name":"note.v1","context":{"text":"quarterly filing deadlines"}})"));
  json::object trip = CreateOk(json::parse(R"({"title":"lisbon trip","schema_name":"task.v1","context":{"text":"trams and the harbour"}})"));
  ASSERT_TRUE(CaughtUp());
  json::object model = Model();
  EXPECT_EQ(StringAt(model, "model"), "builtin/hash-384");
  EXPECT_EQ(IntAt(model, "vectors"), 3);
  EXPECT_EQ(Status().at("default_mode"), "hybrid");

  Names nearest = Titles("q=boats+Lisbon+harbour&mode=vector");
  ASSERT_EQ(nearest.size(), 3u);
  EXPECT_EQ(nearest.front(), "harbour lights");
  EXPECT_EQ(nearest.back(), "tax forms");
  EXPECT_EQ(Titles("q=boats+Lisbon+harbour&mode=vector&schema_name=task.v1"), Names{"lisbon trip"});
  // Hybrid (the default) fuses the text and vector lists.
  Response hybrid = client().Get("/breadcrumbs/search?q=harbour+boats&limit=2");
  ASSERT_EQ(hybrid.status, 200) << hybrid.Describe();
  EXPECT_EQ(ObjectOf(hybrid).at("mode"), "hybrid");
  EXPECT_EQ(ObjectOf(hybrid).at("items").as_array().at(0).as_object().at("title"), "harbour lights");

  // A caller's own vector: the record's own embedding finds it first; a wrong dimension is refused.
  search::HashingEmbedder embedder;
  json::array qvec;
  for (float x : embedder.EmbedOne("lisbon trip\ntrams and the harbour")) qvec.emplace_back(x);
  Response own = client().Get("/breadcrumbs/search?mode=vector&limit=1&qvec=" + UrlEncode(JsonText(qvec)));
  ASSERT_EQ(own.status, 200) << own.Describe();
  EXPECT_EQ(StringAt(ObjectOf(own).at("items").as_array().at(0).as_object(), "id"), StringAt(trip, "id"));
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/search?mode=vector&qvec=%5B1%2C2%5D"), 400, "bad_request", "qvec"));

  // Deleted: gone from vector search as from text search.
  ASSERT_EQ(client().Delete("/breadcrumbs/" + StringAt(trip, "id")).status, 204);
  EXPECT_EQ(Titles("q=trams&mode=vector").size(), 2u);
  EXPECT_EQ(IntAt(Model(), "vectors"), 2);
}

TEST_F(e2e_search_vector, UpdatedAndExpiredRecordsLeaveVectorSearch) {
  const auto expiry = std::chrono::system_clock::now() + std::chrono::milliseconds(1500);
  CreateOk(json::object{{"title", "ephemeral albatross"}, {"ttl", Rfc3339Utc(expiry)}});
  json::object moved = CreateOk(json::parse(R"({"title":"seabird","context":{"about":"albatross gliding"}})"));
  CreateTitled("lasting albatross");
  ASSERT_TRUE(CaughtUp());
  EXPECT_EQ(Titles("q=albatross&mode=vector").size(), 3u);
  PatchOk(StringAt(moved, "id"), json::parse(R"({"title":"spreadsheet","context":{"about":"pivot tables"}})"));
  ASSERT_TRUE(CaughtUp());
  EXPECT_EQ(Titles("q=pivot+tables+spreadsheet&mode=vector&limit=1"), Names{"spreadsheet"});
  // The wait is for the ttl itself: the server runs on this machine's clock.
  std::this_thread::sleep_until(expiry + std::chrono::milliseconds(50));
  Names left = Titles("q=albatross&mode=vector");
  EXPECT_EQ(std::count(left.begin(), left.end(), "ephemeral albatross"), 0);
  EXPECT_EQ(left.size(), 2u);
}

class e2e_search_no_vectors : public SearchServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override { return {"--embedder", "none"}; }
};

TEST_F(e2e_search_no_vectors, TextOnlyAndVectorModesRefusedNamingMode) {
  CreateTitled("plain text only");
  EXPECT_EQ(Status().at("default_mode"), "text");
  EXPECT_TRUE(Status().at("models").as_array().empty());
  Response r = client().Get("/breadcrumbs/search?q=plain");
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(ObjectOf(r).at("mode"), "text");
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/search?q=plain&mode=vector"), 400, "bad_request", "mode"));
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/search?q=plain&mode=hybrid"), 400, "bad_request", "mode"));
}

class e2e_search_remote : public SearchServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    return {"--embedder", "custom/test-embed", "--llm-base-url", endpoint_.Url(), "--embed-batch-size", "8"};
  }
  mutable EmbeddingEndpoint endpoint_;
};

TEST_F(e2e_search_remote, KillNineWithABacklogLosesNoEmbedding) {
  endpoint_.hold = true;
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    ids.push_back(StringAt(CreateOk(json::object{{"title", "record " + std::to_string(i)},
                                                 {"context", {{"word", "unique" + std::to_string(i * 7919)}}}}),
                           "id"));
  }
  // The worker has asked for embeddings and waits: the backlog is real when the server dies.
  ASSERT_TRUE(endpoint_.server().WaitForRequests(1, kDeadline));
  json::object before = Model();
  EXPECT_GT(IntAt(before, "backlog"), 0) << JsonText(before);
  EXPECT_EQ(IntAt(before, "vectors"), 0) << JsonText(before);
  server().Kill9();
  endpoint_.hold = false;
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  ASSERT_TRUE(CaughtUp());
  json::object after = Model();
  EXPECT_EQ(IntAt(after, "vectors"), 20) << JsonText(after);
  EXPECT_EQ(StringAt(after, "model"), "custom/test-embed");
  EXPECT_EQ(IntAt(after, "dimension"), 64);
  // Each record is found by its own word through the remote embedder.
  for (int i : {0, 13, 19}) {
    Response r = client().Get("/breadcrumbs/search?mode=vector&limit=1&q=record+" + std::to_string(i) + "+unique" +
                              std::to_string(i * 7919));
    ASSERT_EQ(r.status, 200) << r.Describe();
    EXPECT_EQ(StringAt(ObjectOf(r).at("items").as_array().at(0).as_object(), "id"), ids[i]);
  }
}

// The approximate index (hnswlib) from the first vector: built on the first search, followed as
// records are written, saved at a clean stop and loaded at the next start, rebuilt after a crash
// left it stale.
class e2e_search_hnsw : public SearchServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override { return {"--hnsw-min-vectors", "1"}; }
  json::object Index() {
    json::object model = Model();
    return model.contains("index") ? model.at("index").as_object() : json::object{};
  }
};

TEST_F(e2e_search_hnsw, BuiltFollowedSavedLoadedAndRebuiltWhenStale) {
  CreateOk(json::parse(R"({"title":"harbour lights","schema_name":"note.v1","context":{"text":"boats in the Lisbon harbour"}})"));
  CreateOk(json::parse(R"({"title":"tax forms","schema_name":"note.v1","context":{"text":"quarterly filing deadlines"}})"));
  json::object trip = CreateOk(json::parse(R"({"title":"lisbon trip","schema_name":"task.v1","context":{"text":"trams and the harbour"}})"));
  ASSERT_TRUE(CaughtUp());
  EXPECT_EQ(Titles("q=boats+Lisbon+harbour&mode=vector&limit=1"), Names{"harbour lights"});
  EXPECT_EQ(Titles("q=boats+Lisbon+harbour&mode=vector&schema_name=task.v1"), Names{"lisbon trip"});
  json::object index = Index();
  EXPECT_EQ(StringAt(index, "kind"), "hnsw");
  EXPECT_EQ(IntAt(index, "builds"), 1);
  EXPECT_EQ(IntAt(index, "indexed_vectors"), 3);
  // A deleted record is not found, though its vector was in the index.
  ASSERT_EQ(client().Delete("/breadcrumbs/" + StringAt(trip, "id")).status, 204);
  EXPECT_EQ(Titles("q=trams+harbour&mode=vector&schema_name=task.v1"), Names{});

  ASSERT_TRUE(server().Restart()) << server().error();
  Reconnect();
  bool saved = false;
  for (const auto& entry : std::filesystem::directory_iterator(server().data_dir() + "/vector-index")) {
    saved = saved || entry.path().extension() == ".hnsw";
  }
  EXPECT_TRUE(saved);
  EXPECT_EQ(Titles("q=quarterly+filing&mode=vector&limit=1"), Names{"tax forms"});
  EXPECT_EQ(IntAt(Index(), "loads"), 1);
  EXPECT_EQ(IntAt(Index(), "builds"), 0);
  // Written after the load: the worker hands the vector to the loaded index.
  CreateOk(json::parse(R"({"title":"ferry times","schema_name":"note.v1","context":{"text":"cacilhas ferry schedule"}})"));
  ASSERT_TRUE(CaughtUp());
  // Stored (3 vectors: trip's went with it) before it can be in the index: tells the two apart
  // when the next line fails. The status counts the committed log, so a backlog of 0 right after
  // an acknowledged write includes that write (it once read the bus, which publishes later).
  EXPECT_EQ(IntAt(Model(), "vectors"), 3) << JsonText(Model());
  EXPECT_EQ(Titles("q=cacilhas+ferry&mode=vector&limit=1"), Names{"ferry times"}) << JsonText(Model());
  EXPECT_EQ(IntAt(Index(), "builds"), 0);

  // A crash: the saved index misses the ferry; its fingerprint says so and it is rebuilt.
  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  ASSERT_TRUE(CaughtUp());
  EXPECT_EQ(Titles("q=cacilhas+ferry&mode=vector&limit=1"), Names{"ferry times"});
  EXPECT_EQ(IntAt(Index(), "builds"), 1);
  EXPECT_EQ(IntAt(Index(), "loads"), 0);
}

}  // namespace
}  // namespace cairn::e2e
