#include "store/sqlite/fts_query.h"

#include <gtest/gtest.h>

#include "store/search_words.h"
#include "store/text_index.h"

namespace cairn::store::sqlite {
namespace {

std::string Compiled(std::string_view text) {
  auto match = CompileFtsQuery(text);
  EXPECT_TRUE(match.ok()) << match.status().ToString();
  return match.ok() ? *match : "";
}

void ExpectRefused(std::string_view text) {
  auto match = CompileFtsQuery(text);
  ASSERT_FALSE(match.ok()) << "accepted: " << *match;
  EXPECT_EQ(match.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(match.status().field(), "q");
}

TEST(FtsQueryTest, WordsBecomeQuotedAlternatives) {
  EXPECT_EQ(Compiled("Lisbon trip"), R"("lisbon" OR "trip")");
  EXPECT_EQ(Compiled("  trip, TRIP; trip "), R"("trip")");
  EXPECT_EQ(Compiled("café 42"), "\"café\" OR \"42\"");
}

TEST(FtsQueryTest, OnlyATrailingStarSurvivesAsPrefix) {
  EXPECT_EQ(Compiled("lisb* *x"), R"("lisb"* OR "x")");
  EXPECT_EQ(Compiled("a*b"), R"("a"* OR "b")");
}

TEST(FtsQueryTest, Fts5SyntaxIsPlainWords) {
  EXPECT_EQ(Compiled(R"(title:secret AND NOT (x OR "y z") NEAR(a b, 3) ^start)"),
            R"("title" OR "secret" OR "and" OR "not" OR "x" OR "or" OR "y" OR "z" OR "near" OR "a" OR "b" OR "3" OR "start")");
  EXPECT_EQ(Compiled("\"\"\"');-- DROP TABLE breadcrumbs"), R"("drop" OR "table" OR "breadcrumbs")");
  EXPECT_EQ(Compiled(std::string("a\0b", 3)), R"("a" OR "b")");
}

TEST(FtsQueryTest, BoundsAndEmptyQueriesAreRefused) {
  ExpectRefused("");
  ExpectRefused("  \"\" * () -- ");
  ExpectRefused(std::string(kMaxSearchQueryBytes + 1, 'a'));
  std::string many;
  for (size_t i = 0; i <= kMaxSearchTerms; ++i) many += "w" + std::to_string(i) + " ";
  ExpectRefused(many);
  // Repeats count once: the bound is on distinct words.
  std::string repeated;
  for (int i = 0; i < 100; ++i) repeated += "same ";
  EXPECT_EQ(Compiled(repeated), R"("same")");
}

TEST(SearchWordsTest, DistinctLowerCasedWordsInOrderUpToTheLimit) {
  auto words = SplitSearchWords("Lisb harbour, LISB* ferry-boat", 3);
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(words[0].text, "lisb");
  EXPECT_TRUE(words[0].prefix);  // the star of either occurrence
  EXPECT_EQ(words[1].text, "harbour");
  EXPECT_FALSE(words[1].prefix);
  EXPECT_EQ(words[2].text, "ferry");  // "boat" is past the limit
  EXPECT_TRUE(SplitSearchWords("?! -- ''", 32).empty());
}

}  // namespace
}  // namespace cairn::store::sqlite
