#include "search/searcher.h"

#include <gtest/gtest.h>

#include "search/vector_search.h"

namespace cairn::search {
namespace {

SearchHit Hit(std::string id, std::string snippet = "") {
  SearchHit hit;
  hit.breadcrumb.id = std::move(id);
  hit.snippet = std::move(snippet);
  return hit;
}

std::vector<std::string> Ids(const std::vector<SearchHit>& hits) {
  std::vector<std::string> ids;
  for (const auto& hit : hits) ids.push_back(hit.breadcrumb.id);
  return ids;
}

class FixedText final : public store::TextIndex {
 public:
  std::vector<SearchHit> hits;
  store::TextSearchQuery last;
  Result<std::vector<SearchHit>> SearchText(const std::string&, const store::TextSearchQuery& query) override {
    last = query;
    return hits;
  }
};

class FixedVectors final : public VectorSearch {
 public:
  std::vector<SearchHit> hits;
  std::optional<std::vector<float>> last_vector;
  Result<std::vector<store::TextHit>> SearchVector(const std::string&, const store::TextSearchQuery&,
                                                   const std::optional<std::vector<float>>& vector) override {
    last_vector = vector;
    return hits;
  }
};

TEST(FuseByRankTest, RecordsHighInBothListsWin) {
  auto fused = FuseByRank({{Hit("a"), Hit("b", "text snippet"), Hit("c")}, {Hit("b"), Hit("d"), Hit("a")}}, 10);
  EXPECT_EQ(Ids(fused), (std::vector<std::string>{"b", "a", "d", "c"}));
  EXPECT_DOUBLE_EQ(fused[0].score, 1.0 / 62 + 1.0 / 61);
  EXPECT_EQ(fused[0].snippet, "text snippet");
  EXPECT_EQ(FuseByRank({{Hit("a"), Hit("b")}, {Hit("c")}}, 2).size(), 2u);
}

TEST(SearcherTest, TextModeGoesToTheTextIndexAlone) {
  FixedText text;
  text.hits = {Hit("a")};
  Searcher searcher(text, nullptr);
  EXPECT_EQ(searcher.default_mode(), Mode::kText);
  SearchRequest request;
  request.query.text = "x";
  auto hits = searcher.Search("default", request);
  ASSERT_TRUE(hits.ok());
  EXPECT_EQ(Ids(*hits), std::vector<std::string>{"a"});
  request.vector = std::vector<float>{1, 0};
  EXPECT_EQ(searcher.Search("default", request).status().field(), "qvec");
}

TEST(SearcherTest, VectorModesAreRefusedNamingModeWhenVectorsAreOff) {
  FixedText text;
  Searcher searcher(text, nullptr);
  for (Mode mode : {Mode::kVector, Mode::kHybrid}) {
    SearchRequest request;
    request.mode = mode;
    request.query.text = "x";
    auto refused = searcher.Search("default", request);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(refused.status().field(), "mode");
  }
}

TEST(SearcherTest, HybridFusesBothListsFetchedDeeperThanThePage) {
  FixedText text;
  text.hits = {Hit("t1"), Hit("both")};
  FixedVectors vectors;
  vectors.hits = {Hit("both"), Hit("v1")};
  Searcher searcher(text, &vectors);
  EXPECT_EQ(searcher.default_mode(), Mode::kHybrid);
  SearchRequest request;
  request.mode = Mode::kHybrid;
  request.query.text = "x";
  request.query.limit = 2;
  auto hits = searcher.Search("default", request);
  ASSERT_TRUE(hits.ok());
  EXPECT_EQ(Ids(*hits), (std::vector<std::string>{"both", "t1"}));
  EXPECT_EQ(text.last.limit, 4u);
  for (const char* mode : {"text", "vector", "hybrid"}) EXPECT_EQ(ModeName(*ParseMode(mode)), mode);
  EXPECT_FALSE(ParseMode("semantic"));
}

}  // namespace
}  // namespace cairn::search
