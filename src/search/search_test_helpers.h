// Helpers of the search module's tests (embedding_worker_test, hnsw_test).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "search/embedding_worker.h"
#include "search/vector_search.h"
#include "store/store.h"

namespace cairn::search::test_helpers {

// The titles of `search`'s nearest `limit` records to `text` in the default tenant, best first.
inline std::vector<std::string> NearestTitles(VectorSearch& search, const std::string& text,
                                              store::TextSearchQuery query, size_t limit) {
  query.text = text;
  query.limit = limit;
  auto hits = search.SearchVector("default", query, std::nullopt);
  EXPECT_TRUE(hits.ok()) << hits.status().ToString();
  std::vector<std::string> titles;
  if (hits.ok()) {
    for (const auto& hit : *hits) titles.push_back(hit.breadcrumb.title);
  }
  return titles;
}

// Waits until `worker` has stored every event of `store` so far.
inline ::testing::AssertionResult CaughtUp(store::Store& store, EmbeddingWorker& worker,
                                           std::chrono::milliseconds deadline) {
  const int64_t last = store.Stats().value().last_event_seq;
  if (worker.WaitCaughtUp(last, deadline)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "cursor " << worker.GetStatus().cursor << " of " << last;
}

}  // namespace cairn::search::test_helpers
