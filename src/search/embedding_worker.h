// EmbeddingWorker: computes the vectors of records after their writes, for one embedder.
//
// It follows the event log with a durable cursor ("search.embed:<model>" in the CursorStore):
// each batch of events becomes the set of records created or updated in it whose schema is
// embedded (EmbedsSchema); their current state is read, embedded in requests of at most
// `batch_size` texts, and the vectors are stored together with the new cursor in one transaction
// (VectorStore::PutVectors). A crash (kill -9) before that commit loses nothing: the events are
// read again. A batch that stores no vector (events of other schemas) moves the cursor in memory
// only, saved at most once a second, so unrelated writes cost no extra commit each; they do not
// even wake the worker (bus SubscribeWhen): it passes over them with the next event of an embedded
// schema, after 1,024 of them, within 5 s, or when GetStatus or WaitCaughtUp sees a backlog. After
// storing vectors it lingers up to 50 ms while fewer than `batch_size` events wait (Linger), so
// that records written one at a time are stored a batch per transaction. A
// record that stopped being embedded (its schema changed) loses its vector then; a deleted one
// lost it with the delete.
//
// A model without a cursor (new, or its events pruned past the cursor) first fills in the vectors
// of every record that has none (VectorStore::MissingVectors), then follows the log from where it
// stood when the fill began.
//
// Failures: a batch whose embedding fails is retried with exponential backoff (the cursor does
// not move) while the failure may pass (kUnavailable); a batch failing otherwise
// (`max_attempts` times) is skipped and counted, so one bad input cannot stop the worker.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/metrics.h"
#include "bus/event_bus.h"
#include "search/embedder.h"
#include "store/cursor_store.h"
#include "store/store.h"
#include "store/vector_store.h"

namespace cairn::search {

struct EmbeddingWorkerOptions {
  // Schema names to embed: globs where '*' matches any run of characters; "*" (the default) is
  // every schema, records without one included. Reserved schemas (model/reserved.h: runs,
  // snapshots, sessions and their messages, definitions, tool protocol, ...) only when named
  // exactly.
  std::vector<std::string> schemas = {"*"};
  size_t batch_size = 32;  // texts per embedding request, 1 to kMaxEmbedBatch
  int max_attempts = 5;    // for failures other than kUnavailable
  std::chrono::milliseconds backoff_base{200};
  std::chrono::milliseconds backoff_max{30000};
  // Called on the worker's thread after vectors were stored (with the removals stored with them):
  // how an in-memory index (HnswVectorSearch::OnStored) follows the source of truth. May be empty.
  std::function<void(const std::vector<store::VectorWrite>&, const std::vector<store::VectorKey>&)> on_stored;
  // Called once per Start on the worker's thread, the first time it has gone through every event
  // on the bus (after filling in, when it had to): how EmbeddingModels learns that a new model
  // can serve. The worker follows no events while it runs. May be empty.
  std::function<void()> on_caught_up;
};

// Whether records of `schema_name` (nullopt: none) get vectors under `schemas`.
bool EmbedsSchema(const std::vector<std::string>& schemas, const std::optional<std::string>& schema_name);

struct EmbeddingStatus {
  std::string model;
  size_t dimension = 0;
  int64_t cursor = 0;          // the last event seq whose vectors are stored
  int64_t last_event_seq = 0;  // the newest committed event
  int64_t backlog = 0;         // events not yet gone through (last_event_seq - cursor), 0 when caught up
  bool filling = false;        // filling in the vectors of records written before the model
  int64_t vectors = 0;
  int64_t failed_batches = 0;
  std::string last_error;      // of the last failed attempt, "" after a success
};

class EmbeddingWorker {
 public:
  // All must outlive the worker; `metrics` may be null.
  EmbeddingWorker(store::Store& records, store::VectorStore& vectors, store::CursorStore& cursors,
                  bus::EventBus& bus, Embedder& embedder, EmbeddingWorkerOptions options, MetricsRegistry* metrics);
  ~EmbeddingWorker();

  // Starts the thread. Idempotent. Start and Stop are called by the owner, from one thread.
  void Start();
  // Stops and joins the thread; a batch in flight is abandoned (its events are read again). Never
  // called holding a lock the bus's wake-ups take.
  void Stop();

  EmbeddingStatus GetStatus() const;

  // The CursorStore consumer of `model`'s worker: "search.embed:<model>".
  static std::string ConsumerFor(const std::string& model) { return "search.embed:" + model; }

  // Waits until the worker has found where to start (and filled in older records if it had to) and
  // every event up to `seq` is done and stored with the cursor (vectors written, removed or
  // skipped); false on timeout.
  bool WaitCaughtUp(int64_t seq, std::chrono::milliseconds timeout);

 private:
  void Run();
  // Waits until woken by new events or stopped, at most `timeout`. False when stopping.
  bool Wait(std::chrono::milliseconds timeout);
  // After vectors were stored, while fewer than a batch of events wait, waits for more, until
  // kLinger after that store: a steady trickle of writes is embedded and stored a batch per
  // transaction, not a transaction per record (the writer is shared with the writes). A status
  // with a backlog, WaitCaughtUp or Stop ends the wait.
  void Linger();
  Status Fill(int64_t start_seq);
  using Record = std::shared_ptr<const model::Breadcrumb>;
  // Embeds `records` into `writes` (those no longer embedded go to `removals`), retrying as the
  // class comment says; kUnavailable only when stopping.
  Status Embed(const std::vector<Record>& records, std::vector<store::VectorWrite>* writes,
               std::vector<store::VectorKey>* removals);
  // Stores `writes`, the pending removals and the cursor at `seq` in one transaction.
  Status Flush(const std::vector<store::VectorWrite>& writes, int64_t seq);
  void Advanced(int64_t seq);  // every event up to `seq` is done
  Status EmbedWithRetries(const std::vector<std::string>& texts, std::vector<std::vector<float>>* out);
  // VectorStore::CountVectors, reused while neither the committed log (`last_event_seq`) nor the
  // stored cursor moved.
  int64_t CachedVectorCount(int64_t last_event_seq) const;

  store::Store& records_;
  store::VectorStore& vectors_;
  store::CursorStore& cursors_;
  bus::EventBus& bus_;
  Embedder& embedder_;
  EmbeddingWorkerOptions options_;
  std::string model_;  // embedder_.model(), which must not change
  std::string consumer_;
  Counter* embedded_ = nullptr;
  Counter* failed_ = nullptr;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // wakes the worker: events, stop, a status or wait with a backlog
  std::condition_variable advanced_;  // the cursor moved (WaitCaughtUp)
  mutable bool woken_ = false;
  bool lingering_ = false;  // in Linger: the bus wakes the worker only for a full batch
  mutable bool urgent_ = false;  // someone waits for the backlog (GetStatus, WaitCaughtUp): no lingering
  bool stopping_ = false;
  std::string last_error_;
  std::atomic<int64_t> cursor_{0};  // in memory: every event up to it is done (or pending below)
  std::atomic<int64_t> persisted_seq_{0};  // the stored cursor (written by the worker thread)
  // The worker thread's own: removals not stored yet, the time of the last store.
  std::vector<store::VectorKey> pending_removals_;
  std::chrono::steady_clock::time_point last_flush_;
  std::chrono::steady_clock::time_point last_vectors_stored_;  // the last Flush with vectors (Linger)
  std::atomic<bool> filling_{false};
  std::atomic<bool> positioned_{false};  // the start position is known (set by Run, reset by Start)
  bool announced_caught_up_ = false;     // on_caught_up was called (the worker thread's; reset by Start)
  std::atomic<int64_t> failed_batches_{0};
  mutable std::mutex count_mu_;  // the cached count (CachedVectorCount)
  mutable std::optional<std::pair<int64_t, int64_t>> count_key_;  // (bus LastSeq, stored cursor)
  mutable int64_t count_ = 0;
  std::unique_ptr<bus::Subscription> subscription_;
  std::thread thread_;
};

}  // namespace cairn::search
