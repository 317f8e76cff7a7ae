#include "search/hnsw_vector_search.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <shared_mutex>

#include <boost/json.hpp>

#include "base/file_util.h"
#include "base/json_util.h"
#include "base/log.h"

namespace cairn::search {
namespace {

constexpr int kFileFormat = 1;
constexpr size_t kCandidatesPerResult = 4;  // a filtered search's first ask, and its widening factor

bool PassesFilters(const model::Breadcrumb& record, const store::TextSearchQuery& query) {
  if (query.reader && !query.reader->MayRead(record.visibility, record.created_by, record.acl)) return false;
  if (query.exclude_secret && record.sensitivity == "secret") return false;
  if (query.schema_name && record.schema_name != query.schema_name) return false;
  for (const std::string& tag : query.all_tags) {
    if (std::find(record.tags.begin(), record.tags.end(), tag) == record.tags.end()) return false;
  }
  if (query.path_prefix) {
    const std::string& prefix = *query.path_prefix;
    if (!record.path) return false;
    const std::string& path = *record.path;
    const bool under = path == prefix || (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
                                          (prefix.empty() || prefix.back() == '/' || path[prefix.size()] == '/'));
    if (!under) return false;
  }
  return true;
}

bool Filtered(const store::TextSearchQuery& query) {
  return query.schema_name || !query.all_tags.empty() || query.path_prefix || (query.reader && !query.reader->admin) ||
         query.exclude_secret;
}

std::optional<std::string> ReadWhole(const std::string& path) {
  auto bytes = ReadWholeFile(path);
  if (!bytes.ok()) return std::nullopt;
  return std::move(bytes).value();
}

}  // namespace

struct HnswVectorSearch::TenantIndex {
  std::shared_mutex rw;  // shared: searches; exclusive: changes to the index and the labels
  std::unique_ptr<HnswIndex> index;  // null while empty
  std::vector<std::string> ids;      // label -> record id
  std::unordered_map<std::string, uint64_t> labels;

  // Writes that arrive while the index is being built wait here (under `pending_mu`).
  std::mutex pending_mu;
  bool ready = false;
  std::vector<store::VectorWrite> pending_writes;
  std::vector<store::VectorKey> pending_removals;

  // Under `rw` exclusively (or before `ready`).
  void Put(const std::string& id, const float* values, size_t dimension, const HnswOptions& options) {
    if (!index) index = std::make_unique<HnswIndex>(dimension, options);
    if (dimension != index->dimension()) return;  // written under another dimension of the same name
    auto [it, inserted] = labels.try_emplace(id, ids.size());
    if (inserted) ids.push_back(id);
    if (Status added = index->Add(it->second, values); !added.ok()) {
      CAIRN_LOG_WARN("search: the vector of {} is not indexed: {}", id, added.message());
    }
  }
  void Erase(const std::string& id) {
    auto it = labels.find(id);
    if (it != labels.end() && index) index->Remove(it->second);
  }
};

HnswVectorSearch::HnswVectorSearch(store::VectorStore& vectors, store::Store& records, Embedder& embedder,
                                   HnswSearchOptions options)
    : vectors_(vectors),
      records_(records),
      embedder_(embedder),
      options_(std::move(options)),
      exact_(vectors, records, embedder) {}

HnswVectorSearch::~HnswVectorSearch() = default;

Result<std::shared_ptr<HnswVectorSearch::TenantIndex>> HnswVectorSearch::IndexFor(const std::string& owner_id) {
  {
    std::lock_guard lock(mu_);
    if (dropped_) return std::shared_ptr<TenantIndex>();
    auto found = tenants_.find(owner_id);
    if (found != tenants_.end()) {
      std::lock_guard pending(found->second->pending_mu);
      return found->second->ready ? found->second : std::shared_ptr<TenantIndex>();
    }
  }
  CAIRN_ASSIGN_OR_RETURN(auto fingerprint, vectors_.FingerprintVectors(owner_id, embedder_.model()));
  if (fingerprint.count < static_cast<int64_t>(std::max<size_t>(options_.min_vectors, 1))) return std::shared_ptr<TenantIndex>();
  auto tenant = std::make_shared<TenantIndex>();
  {
    std::lock_guard lock(mu_);
    if (dropped_ || !tenants_.try_emplace(owner_id, tenant).second) return std::shared_ptr<TenantIndex>();  // another search builds it
  }
  Status built = Load(owner_id, fingerprint, *tenant) ? Status::Ok() : Build(owner_id, fingerprint, *tenant);
  if (!built.ok()) {
    std::lock_guard lock(mu_);
    tenants_.erase(owner_id);
    return built;
  }
  std::unique_lock writer(tenant->rw);
  std::lock_guard pending(tenant->pending_mu);
  for (const auto& write : tenant->pending_writes) {
    tenant->Put(write.breadcrumb_id, write.values.data(), write.values.size(), options_.hnsw);
  }
  for (const auto& key : tenant->pending_removals) tenant->Erase(key.breadcrumb_id);
  tenant->pending_writes.clear();
  tenant->pending_removals.clear();
  tenant->ready = true;
  return tenant;
}

Status HnswVectorSearch::Build(const std::string& owner_id, const store::VectorFingerprint& fingerprint,
                               TenantIndex& tenant) {
  const auto start = std::chrono::steady_clock::now();
  store::TextSearchQuery everything;
  CAIRN_RETURN_IF_ERROR(vectors_.ScanVectors(owner_id, embedder_.model(), everything,
                                             [&](std::string_view id, const float* values, size_t dimension) {
                                               tenant.Put(std::string(id), values, dimension, options_.hnsw);
                                             }));
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  builds_++;
  CAIRN_LOG_INFO("search: built the {} index of tenant {} from {} vectors in {} ms", embedder_.model(), owner_id,
                 fingerprint.count, ms);
  return Status::Ok();
}

std::string HnswVectorSearch::PathFor(const std::string& owner_id) const {
  // Tenant ids and model names may hold any character: the file is named by their hash.
  std::string digest = Sha256Checksum(embedder_.model() + '\n' + owner_id);
  digest = digest.substr(digest.find(':') + 1, 32);
  return (std::filesystem::path(options_.directory) / digest).string();
}

bool HnswVectorSearch::Load(const std::string& owner_id, const store::VectorFingerprint& fingerprint,
                            TenantIndex& tenant) {
  if (options_.directory.empty()) return false;
  const std::string base = PathFor(owner_id);
  auto meta_text = ReadWhole(base + ".json");
  if (!meta_text) return false;  // never saved
  auto stale = [&](const std::string& why) {
    CAIRN_LOG_INFO("search: the saved {} index of tenant {} is {}: rebuilding it", embedder_.model(), owner_id, why);
    return false;
  };
  boost::system::error_code error;
  boost::json::value meta = boost::json::parse(*meta_text, error);
  const auto* object = meta.if_object();
  if (error || object == nullptr) return stale("unreadable");
  try {
    if (object->at("format").to_number<int>() != kFileFormat || object->at("model").as_string() != embedder_.model() ||
        object->at("owner_id").as_string() != owner_id) {
      return stale("of another format, model or tenant");
    }
    const auto& saved = object->at("fingerprint").as_object();
    store::VectorFingerprint saved_fingerprint{saved.at("count").to_number<int64_t>(),
                                               saved.at("version_sum").to_number<int64_t>(),
                                               saved.at("last_updated_at").to_number<int64_t>()};
    if (!(saved_fingerprint == fingerprint)) return stale("stale (the vectors changed since it was saved)");
    auto index_bytes = ReadWhole(base + ".hnsw");
    if (!index_bytes) return stale("missing");
    if (Sha256Checksum(*index_bytes) != object->at("checksum").as_string()) return stale("corrupt (bad checksum)");
    index_bytes.reset();
    const auto dimension = object->at("dimension").to_number<size_t>();
    auto loaded = HnswIndex::Load(base + ".hnsw", dimension, options_.hnsw);
    if (!loaded.ok()) return stale(loaded.status().message());
    tenant.index = std::move(*loaded);
    for (const auto& id : object->at("ids").as_array()) {
      std::string text(id.as_string());
      tenant.labels.emplace(text, tenant.ids.size());
      tenant.ids.push_back(std::move(text));
    }
  } catch (const std::exception& e) {  // a field missing or of another type
    tenant.index.reset();
    tenant.ids.clear();
    tenant.labels.clear();
    return stale(std::string("unreadable: ") + e.what());
  }
  loads_++;
  CAIRN_LOG_INFO("search: loaded the {} index of tenant {} ({} vectors)", embedder_.model(), owner_id,
                 fingerprint.count);
  return true;
}

Status HnswVectorSearch::SaveOne(const std::string& owner_id, TenantIndex& tenant) {
  std::shared_lock reader(tenant.rw);
  if (!tenant.index) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(auto fingerprint, vectors_.FingerprintVectors(owner_id, embedder_.model()));
  const std::string base = PathFor(owner_id);
  CAIRN_RETURN_IF_ERROR(tenant.index->Save(base + ".hnsw.tmp"));
  auto bytes = ReadWhole(base + ".hnsw.tmp");
  if (!bytes) return Status::Internal("search: cannot read back " + base + ".hnsw.tmp");
  boost::json::array ids;
  ids.reserve(tenant.ids.size());
  for (const auto& id : tenant.ids) ids.emplace_back(id);
  boost::json::object meta{{"format", kFileFormat},
                           {"model", embedder_.model()},
                           {"owner_id", owner_id},
                           {"dimension", tenant.index->dimension()},
                           {"fingerprint",
                            {{"count", fingerprint.count},
                             {"version_sum", fingerprint.version_sum},
                             {"last_updated_at", fingerprint.last_updated_at}}},
                           {"checksum", Sha256Checksum(*bytes)},
                           {"ids", std::move(ids)}};
  bytes.reset();
  {
    std::ofstream out(base + ".json.tmp", std::ios::binary | std::ios::trunc);
    out << boost::json::serialize(meta);
    if (!out.flush()) return Status::Internal("search: cannot write " + base + ".json.tmp");
  }
  // The index first: a crash between the renames leaves a checksum that does not match (rebuilt).
  std::error_code error;
  std::filesystem::rename(base + ".hnsw.tmp", base + ".hnsw", error);
  if (!error) std::filesystem::rename(base + ".json.tmp", base + ".json", error);
  if (error) return Status::Internal("search: cannot save " + base + ": " + error.message());
  return Status::Ok();
}

Status HnswVectorSearch::Save() {
  if (options_.directory.empty()) return Status::Ok();
  std::error_code error;
  std::filesystem::create_directories(options_.directory, error);
  if (error) return Status::Internal("search: cannot create " + options_.directory + ": " + error.message());
  std::vector<std::pair<std::string, std::shared_ptr<TenantIndex>>> ready;
  {
    std::lock_guard lock(mu_);
    if (dropped_) return Status::Ok();
    for (const auto& [owner, tenant] : tenants_) {
      std::lock_guard pending(tenant->pending_mu);
      if (tenant->ready) ready.emplace_back(owner, tenant);
    }
  }
  for (auto& [owner, tenant] : ready) CAIRN_RETURN_IF_ERROR(SaveOne(owner, *tenant));
  return Status::Ok();
}

void HnswVectorSearch::OnStored(const std::vector<store::VectorWrite>& writes,
                                const std::vector<store::VectorKey>& removals) {
  std::unordered_map<std::string, std::shared_ptr<TenantIndex>> touched;
  {
    std::lock_guard lock(mu_);
    for (const auto& write : writes) {
      if (auto found = tenants_.find(write.owner_id); found != tenants_.end()) touched.emplace(*found);
    }
    for (const auto& key : removals) {
      if (auto found = tenants_.find(key.owner_id); found != tenants_.end()) touched.emplace(*found);
    }
  }
  for (auto& [owner, tenant] : touched) {
    {
      std::lock_guard pending(tenant->pending_mu);
      if (!tenant->ready) {  // being built: applied when the build ends
        for (const auto& write : writes) {
          if (write.owner_id == owner) tenant->pending_writes.push_back(write);
        }
        for (const auto& key : removals) {
          if (key.owner_id == owner) tenant->pending_removals.push_back(key);
        }
        continue;
      }
    }
    std::unique_lock writer(tenant->rw);
    for (const auto& write : writes) {
      if (write.owner_id == owner) tenant->Put(write.breadcrumb_id, write.values.data(), write.values.size(), options_.hnsw);
    }
    for (const auto& key : removals) {
      if (key.owner_id == owner) tenant->Erase(key.breadcrumb_id);
    }
  }
}

Result<std::vector<store::TextHit>> HnswVectorSearch::SearchVector(const std::string& owner_id,
                                                                   const store::TextSearchQuery& query,
                                                                   const std::optional<std::vector<float>>& vector) {
  CAIRN_ASSIGN_OR_RETURN(std::vector<float> probe, QueryVector(embedder_, query, vector));
  CAIRN_ASSIGN_OR_RETURN(auto tenant, IndexFor(owner_id));
  if (!tenant) return exact_.SearchVector(owner_id, query, probe);
  std::vector<store::TextHit> hits;
  std::vector<std::string> gone;  // deleted or expired records still in the index
  {
    std::shared_lock reader(tenant->rw);
    if (!tenant->index || tenant->index->dimension() != probe.size()) {
      reader.unlock();
      return exact_.SearchVector(owner_id, query, probe);
    }
    const bool filtered = Filtered(query);
    size_t k = filtered ? query.limit * kCandidatesPerResult : query.limit + 8;
    while (true) {
      auto candidates = tenant->index->Search(probe.data(), k);
      hits.clear();
      gone.clear();
      for (const auto& [label, score] : candidates) {
        if (hits.size() == query.limit) break;
        const std::string& id = tenant->ids[label];
        auto record = records_.GetShared(owner_id, id);
        if (!record.ok()) {
          if (record.status().code() != StatusCode::kNotFound) return record.status();
          gone.push_back(id);
          continue;
        }
        if (!PassesFilters(**record, query)) continue;
        store::TextHit hit;
        hit.breadcrumb = **record;
        hit.score = score;
        hits.push_back(std::move(hit));
      }
      if (hits.size() == query.limit || candidates.size() < k) break;  // enough, or the index has no more
      if (k >= options_.max_candidates) {
        reader.unlock();
        exact_fallbacks_++;
        return exact_.SearchVector(owner_id, query, probe);
      }
      k = std::min(k * kCandidatesPerResult, std::max(options_.max_candidates, query.limit + 8));
    }
  }
  if (!gone.empty()) {
    std::unique_lock writer(tenant->rw);
    for (const auto& id : gone) tenant->Erase(id);
  }
  return hits;
}

void HnswVectorSearch::Drop() {
  {
    std::lock_guard lock(mu_);
    tenants_.clear();
    dropped_ = true;
  }
  if (!options_.directory.empty()) RemoveSaved(options_.directory, embedder_.model());
}

size_t HnswVectorSearch::RemoveSaved(const std::string& directory, const std::string& model) {
  size_t removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (entry.path().extension() != ".json") continue;
    auto text = ReadWhole(entry.path().string());
    boost::system::error_code parse_error;
    boost::json::value meta = text ? boost::json::parse(*text, parse_error) : boost::json::value();
    const auto* object = meta.if_object();
    const auto* saved_model = object ? object->if_contains("model") : nullptr;
    if (parse_error || saved_model == nullptr || !saved_model->is_string() || saved_model->as_string() != model) continue;
    std::filesystem::path base = entry.path();
    base.replace_extension();
    std::error_code ignored;
    // The index file first: a meta file left alone by a crash names an index that fails its checksum.
    std::filesystem::remove(base.string() + ".hnsw", ignored);
    if (std::filesystem::remove(entry.path(), ignored)) removed++;
  }
  if (removed > 0) CAIRN_LOG_INFO("search: deleted the {} saved indexes of {}", removed, model);
  return removed;
}

VectorIndexStatus HnswVectorSearch::IndexStatus() const {
  VectorIndexStatus stats;
  stats.kind = "hnsw";
  stats.exact_fallbacks = exact_fallbacks_.load();
  stats.builds = builds_.load();
  stats.loads = loads_.load();
  std::lock_guard lock(mu_);
  for (const auto& [owner, tenant] : tenants_) {
    std::shared_lock reader(tenant->rw);
    if (!tenant->index) continue;
    stats.indexes++;
    stats.indexed_vectors += tenant->index->size();
  }
  return stats;
}

}  // namespace cairn::search
