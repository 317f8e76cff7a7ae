#include "search/embedding_worker.h"

#include <algorithm>
#include <set>

#include "base/log.h"
#include "base/thread_name.h"
#include "model/reserved.h"
#include "model/tool_definition.h"
#include "search/record_text.h"

namespace cairn::search {
namespace {

constexpr size_t kEventsPerRead = 256;
constexpr int64_t kUnrelatedLag = 1024;  // events of unembedded schemas that wake the worker at last
constexpr std::chrono::seconds kCursorSaveInterval{1};
// How long, after storing vectors, the worker waits for a batch to gather (Linger): at most this
// much later is a record written alone found by vector search.
constexpr std::chrono::milliseconds kLinger{50};

}  // namespace

bool EmbedsSchema(const std::vector<std::string>& schemas, const std::optional<std::string>& schema_name) {
  for (const std::string& glob : schemas) {
    if (!schema_name) {
      if (glob == "*") return true;
      continue;
    }
    // The same '*' globs as --tool-env-allow (model/tool_definition.h).
    if (model::IsReservedSchema(*schema_name) ? glob == *schema_name : model::ToolEnvPatternMatches(glob, *schema_name)) return true;
  }
  return false;
}

EmbeddingWorker::EmbeddingWorker(store::Store& records, store::VectorStore& vectors, store::CursorStore& cursors,
                                 bus::EventBus& bus, Embedder& embedder, EmbeddingWorkerOptions options,
                                 MetricsRegistry* metrics)
    : records_(records), vectors_(vectors), cursors_(cursors), bus_(bus), embedder_(embedder),
      options_(std::move(options)), model_(embedder.model()), consumer_(ConsumerFor(model_)) {
  options_.batch_size = std::clamp<size_t>(options_.batch_size, 1, kMaxEmbedBatch);
  if (metrics) {
    embedded_ = &metrics->GetCounter("cairn_search_embedded_total", "Records embedded by the embedding worker");
    failed_ = &metrics->GetCounter("cairn_search_embed_failures_total",
                                   "Embedding requests that failed (each retried or, past its attempts, skipped)");
  }
}

EmbeddingWorker::~EmbeddingWorker() { Stop(); }

void EmbeddingWorker::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
    positioned_ = false;
  }
  announced_caught_up_ = false;
  // Subscribed without holding mu_: the bus calls the wake-up under its own lock, and the wake-up
  // takes mu_, so taking them in the other order could deadlock.
  // Woken only by events of embedded schemas: those of runs, snapshots and other unembedded
  // records (deletes need nothing: the vector went with the record) are passed over with the next
  // wake-up, after kUnrelatedLag of them, or when the idle wait ends.
  subscription_ = bus_.SubscribeWhen(
      [this] {
        std::lock_guard wake_lock(mu_);
        woken_ = true;
        // A lingering worker waits for a full batch: waking it for each record written alone
        // would cost a thread switch per record.
        if (lingering_ && bus_.LastSeq() - cursor_.load() < static_cast<int64_t>(options_.batch_size)) return;
        cv_.notify_all();
      },
      [schemas = options_.schemas](const model::Event& event) { return EmbedsSchema(schemas, event.schema_name); },
      kUnrelatedLag);
  thread_ = std::thread([this] {
    NameThisThread("embedder");
    Run();
  });
}

void EmbeddingWorker::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  subscription_.reset();
}

bool EmbeddingWorker::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return woken_ || stopping_; });
  woken_ = false;
  return !stopping_;
}

void EmbeddingWorker::Linger() {
  const auto until = last_vectors_stored_ + kLinger;
  {
    std::lock_guard lock(mu_);
    lingering_ = true;
  }
  while (bus_.LastSeq() - cursor_.load() < static_cast<int64_t>(options_.batch_size)) {
    std::unique_lock lock(mu_);
    if (stopping_ || urgent_) break;
    if (!cv_.wait_until(lock, until, [this] { return woken_ || stopping_ || urgent_; })) break;  // the time is up
    woken_ = false;
  }
  std::lock_guard lock(mu_);
  lingering_ = false;
  urgent_ = false;
}

int64_t EmbeddingWorker::CachedVectorCount(int64_t last_event_seq) const {
  // A count is a scan of the model's vectors: repeated status polls reuse it while no event was
  // committed (a delete or expiry removes vectors in its own transaction) and no vector was
  // stored. The committed log, not the bus, which publishes a moment after the commit.
  std::lock_guard lock(count_mu_);
  const std::pair<int64_t, int64_t> key{last_event_seq, persisted_seq_.load()};
  if (count_key_ && *count_key_ == key) return count_;
  auto count = vectors_.CountVectors(embedder_.model());
  count_ = count.ok() ? *count : -1;
  count_key_ = count.ok() ? std::optional(key) : std::nullopt;
  return count_;
}

EmbeddingStatus EmbeddingWorker::GetStatus() const {
  EmbeddingStatus status;
  status.model = embedder_.model();
  status.dimension = embedder_.dimension();
  status.cursor = cursor_.load();
  // The committed log, not the bus: the bus publishes on its own thread after the commit, and a
  // client that polls the status after an acknowledged write must not see a backlog of 0 before
  // its write's event is counted.
  auto stats = records_.Stats();
  status.last_event_seq = std::max(bus_.LastSeq(), stats.ok() ? stats->last_event_seq : 0);
  status.filling = filling_.load();
  status.backlog = status.filling ? std::max<int64_t>(1, status.last_event_seq - status.cursor)
                                  : std::max<int64_t>(0, status.last_event_seq - status.cursor);
  status.vectors = CachedVectorCount(status.last_event_seq);
  status.failed_batches = failed_batches_.load();
  std::lock_guard lock(mu_);
  status.last_error = last_error_;
  if (status.backlog > 0) {  // perhaps events that do not wake the worker: asked about, it passes over them
    woken_ = true;
    urgent_ = true;
    cv_.notify_all();
  }
  return status;
}

Status EmbeddingWorker::EmbedWithRetries(const std::vector<std::string>& texts, std::vector<std::vector<float>>* out) {
  std::chrono::milliseconds backoff = options_.backoff_base;
  for (int attempt = 1;; ++attempt) {
    auto embedded = embedder_.Embed(texts);
    if (embedded.ok()) {
      std::lock_guard lock(mu_);
      last_error_.clear();
      *out = std::move(embedded).value();
      return Status::Ok();
    }
    if (failed_) failed_->Increment();
    {
      std::lock_guard lock(mu_);
      last_error_ = embedded.status().message();
    }
    const bool transient = embedded.status().code() == StatusCode::kUnavailable;
    if (!transient && attempt >= options_.max_attempts) return embedded.status();
    CAIRN_LOG_WARN("search: embedding {} texts with {} failed (attempt {}): {}", texts.size(), embedder_.model(),
                   attempt, embedded.status().message());
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, backoff, [this] { return stopping_; })) return Status::Unavailable("stopping");
    backoff = std::min(options_.backoff_max, backoff * 2);
  }
}

Status EmbeddingWorker::Embed(const std::vector<Record>& records, std::vector<store::VectorWrite>* writes,
                              std::vector<store::VectorKey>* removals) {
  std::vector<const model::Breadcrumb*> embed;
  for (const auto& record : records) {
    const model::Breadcrumb& crumb = *record;
    // cairn's own records (keys, secrets) never go to an embedder, whatever the schema globs say.
    if (crumb.owner_id != model::kSystemOwner && EmbedsSchema(options_.schemas, crumb.schema_name)) {
      embed.push_back(record.get());
    } else {
      removals->push_back({crumb.owner_id, crumb.id});
    }
  }
  for (size_t start = 0; start < embed.size(); start += options_.batch_size) {
    const size_t end = std::min(embed.size(), start + options_.batch_size);
    std::vector<std::string> texts;
    for (size_t i = start; i < end; ++i) texts.push_back(RecordText(*embed[i]));
    std::vector<std::vector<float>> vectors;
    Status embedded = EmbedWithRetries(texts, &vectors);
    if (!embedded.ok()) {
      if (embedded.code() == StatusCode::kUnavailable) return embedded;  // stopping
      failed_batches_++;
      CAIRN_LOG_ERROR("search: skipping {} records that {} cannot embed: {}", texts.size(), embedder_.model(),
                      embedded.message());
      continue;
    }
    for (size_t i = start; i < end; ++i) {
      writes->push_back({embed[i]->owner_id, embed[i]->id, embed[i]->version, std::move(vectors[i - start])});
    }
    if (embedded_) embedded_->Increment(end - start);
  }
  return Status::Ok();
}

Status EmbeddingWorker::Flush(const std::vector<store::VectorWrite>& writes, int64_t seq) {
  CAIRN_RETURN_IF_ERROR(vectors_.PutVectors(model_, writes, pending_removals_, consumer_, seq));
  if (options_.on_stored && (!writes.empty() || !pending_removals_.empty())) options_.on_stored(writes, pending_removals_);
  pending_removals_.clear();
  last_flush_ = std::chrono::steady_clock::now();
  if (!writes.empty()) last_vectors_stored_ = last_flush_;
  std::lock_guard lock(mu_);
  persisted_seq_ = seq;
  if (cursor_.load() < seq) cursor_ = seq;  // stored means done: a waiter woken here sees no backlog
  advanced_.notify_all();
  return Status::Ok();
}

Status EmbeddingWorker::Fill(int64_t start_seq) {
  filling_ = true;
  CAIRN_LOG_INFO("search: filling in the vectors of {} for records written before it", embedder_.model());
  int64_t after_rid = 0;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return Status::Unavailable("stopping");
    }
    CAIRN_ASSIGN_OR_RETURN(auto missing, vectors_.MissingVectors(embedder_.model(), after_rid, options_.batch_size * 4));
    if (missing.empty()) break;
    std::vector<Record> crumbs;
    for (const auto& m : missing) {
      after_rid = m.rid;
      auto crumb = records_.GetShared(m.owner_id, m.breadcrumb_id);
      if (crumb.ok() && EmbedsSchema(options_.schemas, (*crumb)->schema_name)) crumbs.push_back(std::move(crumb).value());
    }
    std::vector<store::VectorWrite> writes;
    std::vector<store::VectorKey> removals;
    CAIRN_RETURN_IF_ERROR(Embed(crumbs, &writes, &removals));
    if (!writes.empty()) {
      CAIRN_RETURN_IF_ERROR(vectors_.PutVectors(embedder_.model(), writes, {}, "", 0));
      if (options_.on_stored) options_.on_stored(writes, {});
    }
  }
  CAIRN_RETURN_IF_ERROR(Flush({}, start_seq));
  filling_ = false;
  positioned_ = true;
  Advanced(start_seq);
  return Status::Ok();
}

void EmbeddingWorker::Run() {
  constexpr auto kIdle = std::chrono::seconds(5);
  // Where to start: the stored cursor, unless the log no longer holds the events after it.
  while (true) {
    auto cursor = cursors_.LoadCursor(consumer_);
    auto bounds = bus_.Bounds();
    if (cursor.ok() && bounds.ok()) {
      const bool pruned_past = *cursor && bounds->first_seq > 0 && **cursor < bounds->first_seq - 1;
      if (*cursor && !pruned_past) {
        persisted_seq_ = **cursor;
        positioned_ = true;
        Advanced(**cursor);
        break;
      }
      Status filled = Fill(bus_.LastSeq());
      if (filled.ok()) break;
      CAIRN_LOG_WARN("search: filling in vectors failed: {}", filled.message());
    }
    if (!Wait(kIdle)) return;
  }
  // Batches that store no vector move the cursor in memory and are saved at most once a second (and
  // when stopping): re-reading their events after a crash is harmless, and a commit per batch of
  // unrelated events is not.
  auto flush_due = [this] { return std::chrono::steady_clock::now() - last_flush_ >= kCursorSaveInterval; };
  auto flush_pending = [&] {
    if (cursor_.load() == persisted_seq_.load() && pending_removals_.empty()) return;
    Status saved = Flush({}, cursor_.load());
    if (!saved.ok()) CAIRN_LOG_WARN("search: saving the embedding cursor failed (will retry): {}", saved.message());
  };
  while (true) {
    Linger();
    auto events = bus_.Read(cursor_.load(), kEventsPerRead);
    if (!events.ok() || events->empty()) {
      if (!events.ok()) CAIRN_LOG_WARN("search: reading events failed: {}", events.status().message());
      if (events.ok() && !announced_caught_up_ && options_.on_caught_up) {
        announced_caught_up_ = true;
        options_.on_caught_up();
      }
      const bool pending = cursor_.load() != persisted_seq_.load() || !pending_removals_.empty();
      if (pending && flush_due()) flush_pending();
      if (!Wait(pending ? kCursorSaveInterval : kIdle)) {
        flush_pending();
        return;
      }
      continue;
    }
    // The records created or updated by the batch, each once; their current state is embedded. A
    // deleted record lost its vector with the delete. An update to a schema that is not embedded
    // removes the vector the record may have had (its schema may have changed).
    std::set<std::pair<std::string, std::string>> touched;  // (owner, id)
    std::vector<store::VectorKey> removals;
    for (const auto& event : *events) {
      std::pair<std::string, std::string> key{event->owner_id, event->breadcrumb_id};
      if (event->type == "breadcrumb.deleted") {
        touched.erase(key);
      } else if (EmbedsSchema(options_.schemas, event->schema_name)) {
        touched.insert(std::move(key));
      } else {
        touched.erase(key);
        if (event->type == "breadcrumb.updated") removals.push_back({event->owner_id, event->breadcrumb_id});
      }
    }
    std::vector<Record> crumbs;  // shared with the read cache, not copied
    Status read = Status::Ok();
    for (const auto& [owner, id] : touched) {
      auto crumb = records_.GetShared(owner, id);
      if (crumb.ok()) {
        crumbs.push_back(std::move(crumb).value());
      } else if (crumb.status().code() == StatusCode::kUnavailable) {
        read = crumb.status();  // the store is closing or overloaded: try the batch again
        break;
      }  // gone since (deleted, expired) or unreadable (reported by the store): nothing to embed
    }
    std::vector<store::VectorWrite> writes;
    Status stored = read.ok() ? Embed(crumbs, &writes, &removals) : read;
    const int64_t last = events->back()->seq;
    if (stored.ok()) {
      pending_removals_.insert(pending_removals_.end(), removals.begin(), removals.end());
      if (!writes.empty() || flush_due()) stored = Flush(writes, last);
    }
    if (!stored.ok()) {
      CAIRN_LOG_WARN("search: storing vectors failed (will retry): {}", stored.message());
      if (!Wait(std::chrono::seconds(1))) return;
      continue;
    }
    Advanced(last);
  }
}

void EmbeddingWorker::Advanced(int64_t seq) {
  std::lock_guard lock(mu_);
  cursor_ = seq;
  advanced_.notify_all();
}

bool EmbeddingWorker::WaitCaughtUp(int64_t seq, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  woken_ = true;  // the events up to `seq` may be ones that do not wake the worker
  urgent_ = true;
  cv_.notify_all();
  return advanced_.wait_for(lock, timeout, [&] { return positioned_.load() && persisted_seq_.load() >= seq && !filling_.load(); });
}

}  // namespace cairn::search
