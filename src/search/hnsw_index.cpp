// The one file that instantiates hnswlib (a header-only template library, Debian's
// libhnswlib-dev): everything else sees HnswIndex only.
#include "search/hnsw_index.h"

#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "search/embedder.h"

namespace cairn::search {
namespace {

constexpr size_t kInitialCapacity = 1024;

// A unit-length copy of `values`; empty when they are all zeros or not finite.
std::vector<float> UnitCopy(const float* values, size_t dimension) {
  std::vector<float> copy(values, values + dimension);
  for (float x : copy) {
    if (!std::isfinite(x)) return {};
  }
  if (std::all_of(copy.begin(), copy.end(), [](float x) { return x == 0; })) return {};
  Normalize(copy);
  return copy;
}

}  // namespace

struct HnswIndex::Impl {
  explicit Impl(size_t dimension) : space(dimension) {}
  hnswlib::InnerProductSpace space;  // must outlive the graph, which keeps a pointer to it
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph;
};

HnswIndex::HnswIndex(size_t dimension, HnswOptions options)
    : dimension_(dimension), options_(options), impl_(std::make_unique<Impl>(dimension)) {
  impl_->graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(&impl_->space, kInitialCapacity, options.m,
                                                                   options.ef_construction, options.random_seed);
  impl_->graph->setEf(options.ef_search);
}

HnswIndex::HnswIndex(size_t dimension, HnswOptions options, std::unique_ptr<Impl> impl)
    : dimension_(dimension), options_(options), impl_(std::move(impl)) {}

HnswIndex::~HnswIndex() = default;

size_t HnswIndex::size() const { return impl_->graph->cur_element_count - impl_->graph->num_deleted_; }

size_t HnswIndex::MemoryBytes() const {
  const auto& g = *impl_->graph;
  size_t bytes = g.max_elements_ * g.size_data_per_element_;
  for (size_t i = 0; i < g.cur_element_count; ++i) {
    bytes += static_cast<size_t>(g.element_levels_[i]) * g.size_links_per_element_;
  }
  bytes += g.label_lookup_.size() * (sizeof(hnswlib::labeltype) + sizeof(hnswlib::tableint) + 2 * sizeof(void*));
  return bytes;
}

Status HnswIndex::Add(uint64_t label, const float* values) {
  std::vector<float> unit = UnitCopy(values, dimension_);
  if (unit.empty()) return Status::InvalidArgument("a vector of zeros (or not finite) has no direction");
  auto& g = *impl_->graph;
  try {
    if (g.cur_element_count >= g.max_elements_ && g.label_lookup_.find(label) == g.label_lookup_.end()) {
      g.resizeIndex(std::max(kInitialCapacity, g.max_elements_ * 2));
    }
    g.addPoint(unit.data(), label);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("hnsw: ") + e.what());
  }
  return Status::Ok();
}

void HnswIndex::Remove(uint64_t label) {
  auto& g = *impl_->graph;
  auto found = g.label_lookup_.find(label);
  if (found == g.label_lookup_.end() || g.isMarkedDeleted(found->second)) return;
  g.markDelete(label);
}

std::vector<std::pair<uint64_t, float>> HnswIndex::Search(const float* query, size_t k) const {
  std::vector<std::pair<uint64_t, float>> out;
  if (k == 0 || size() == 0) return out;
  std::vector<float> unit = UnitCopy(query, dimension_);
  if (unit.empty()) return out;
  // Farthest first; the distance of InnerProductSpace is 1 - inner product.
  auto found = impl_->graph->searchKnn(unit.data(), std::min(k, size()));
  out.resize(found.size());
  for (size_t i = found.size(); i-- > 0;) {
    out[i] = {found.top().second, 1.0f - found.top().first};
    found.pop();
  }
  return out;
}

void HnswIndex::SetEfSearch(size_t ef) {
  options_.ef_search = ef;
  impl_->graph->setEf(ef);
}

Status HnswIndex::Save(const std::string& path) const {
  try {
    impl_->graph->saveIndex(path);
  } catch (const std::exception& e) {
    return Status::Internal("hnsw: cannot save " + path + ": " + e.what());
  }
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return Status::Internal("hnsw: cannot save " + path);
  return Status::Ok();
}

Result<std::unique_ptr<HnswIndex>> HnswIndex::Load(const std::string& path, size_t dimension, HnswOptions options) {
  auto impl = std::make_unique<Impl>(dimension);
  try {
    impl->graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(&impl->space, path);
  } catch (const std::exception& e) {
    return Status::Internal("hnsw: cannot load " + path + ": " + e.what());
  }
  // hnswlib 0.6.2's loading constructor leaves the deleted count unset: count the marks.
  auto& g = *impl->graph;
  g.num_deleted_ = 0;
  for (size_t i = 0; i < g.cur_element_count; ++i) g.num_deleted_ += g.isMarkedDeleted(static_cast<hnswlib::tableint>(i));
  g.setEf(options.ef_search);
  return std::unique_ptr<HnswIndex>(new HnswIndex(dimension, options, std::move(impl)));
}

}  // namespace cairn::search
