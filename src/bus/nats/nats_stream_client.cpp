#include "bus/nats/nats_stream_client.h"

#include <nats/nats.h>

#include <algorithm>
#include <charconv>

#include "base/log.h"

namespace cairn::bus::nats {
namespace {

constexpr int64_t kNanosPerMilli = 1'000'000;
// Longer than any retention anyone means (and far from overflowing nanoseconds): no age limit.
constexpr int64_t kMaxAgeMillis = int64_t{100} * 365 * 24 * 3600 * 1000;
// How long the destructor waits for NATS to finish a subscription or the connection.
constexpr auto kCloseWait = std::chrono::seconds(10);

Status Failed(const std::string& what, natsStatus s, jsErrCode jerr = static_cast<jsErrCode>(0)) {
  std::string message = what + ": " + natsStatus_GetText(s);
  if (const char* detail = nats_GetLastError(nullptr); detail != nullptr && *detail != '\0') {
    message += std::string(" (") + detail + ")";
  }
  if (jerr != 0) message += " [JetStream error " + std::to_string(static_cast<int>(jerr)) + "]";
  return Status(StatusCode::kUnavailable, message);
}

int64_t MaxAgeNanos(std::chrono::milliseconds max_age) {
  int64_t millis = max_age.count();
  return millis <= 0 || millis > kMaxAgeMillis ? 0 : millis * kNanosPerMilli;
}

}  // namespace

struct NatsStreamClient::Callbacks {
  static void Disconnected(natsConnection*, void* closure) {
    static_cast<NatsStreamClient*>(closure)->Tell(&Listener::disconnected);
  }
  static void Reconnected(natsConnection*, void* closure) {
    CAIRN_LOG_INFO("bus: reconnected to NATS");
    static_cast<NatsStreamClient*>(closure)->Tell(&Listener::reconnected);
  }
  static void Closed(natsConnection*, void* closure) {
    auto* self = static_cast<NatsStreamClient*>(closure);
    std::lock_guard lock(self->done_mu_);
    self->closed_ = true;
    self->done_cv_.notify_all();
  }
  static void Error(natsConnection*, natsSubscription* sub, natsStatus status, void* closure) {
    auto* self = static_cast<NatsStreamClient*>(closure);
    if (sub == nullptr) return;
    if (status == NATS_MISSED_HEARTBEAT || status == NATS_SLOW_CONSUMER || status == NATS_MISMATCH) {
      CAIRN_LOG_WARN("bus: the NATS subscription reports {}; subscribing again", natsStatus_GetText(status));
      self->Tell(&Listener::subscription_lost);
    }
  }
  static void Message(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
    auto* self = static_cast<NatsStreamClient*>(closure);
    {
      std::lock_guard lock(self->message_mu_);
      if (self->on_message_) {
        self->on_message_(std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))));
      }
    }
    natsMsg_Destroy(msg);
  }
  static void PublishFailed(jsCtx*, jsPubAckErr* failure, void* closure) {
    auto* self = static_cast<NatsStreamClient*>(closure);
    self->publish_failures_.fetch_add(1);
    CAIRN_LOG_DEBUG("bus: NATS did not store a message: {}", failure->ErrText ? failure->ErrText : natsStatus_GetText(failure->Err));
  }
  static void SubscriptionComplete(void* closure) {
    auto* self = static_cast<NatsStreamClient*>(closure);
    std::lock_guard lock(self->done_mu_);
    self->sub_complete_ = true;
    self->done_cv_.notify_all();
  }
};

Status CheckStreamName(const std::string& name) {
  bool valid = !name.empty() && name.size() <= 64;
  for (char c : name) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
  }
  if (valid) return Status::Ok();
  return Status(StatusCode::kInvalidArgument,
                "nats_stream: expected 1 to 64 letters, digits, '_' or '-', got '" + name + "'", "nats_stream");
}

std::string NatsUrlForLog(const std::string& url) {
  std::string out;
  size_t begin = 0;
  while (begin <= url.size()) {
    size_t end = std::min(url.find(',', begin), url.size());
    std::string one = url.substr(begin, end - begin);
    size_t host = one.find("://");
    host = host == std::string::npos ? 0 : host + 3;
    if (size_t at = one.rfind('@'); at != std::string::npos && at >= host) one.erase(host, at + 1 - host);
    if (begin > 0) out += ',';
    out += one;
    begin = end + 1;
  }
  return out;
}

NatsStreamClient::NatsStreamClient(NatsStreamOptions options)
    : options_(std::move(options)), subject_(options_.stream + ".events") {}

Result<std::unique_ptr<NatsStreamClient>> NatsStreamClient::Connect(NatsStreamOptions options) {
  CAIRN_RETURN_IF_ERROR(CheckStreamName(options.stream));
  std::unique_ptr<NatsStreamClient> client(new NatsStreamClient(std::move(options)));
  const NatsStreamOptions& o = client->options_;
  natsOptions* opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetURL(opts, o.url.c_str());
  if (s == NATS_OK) s = natsOptions_SetName(opts, o.connection_name.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 2000);  // the first connect
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);  // then, forever
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 250);
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(opts, &Callbacks::Disconnected, client.get());
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts, &Callbacks::Reconnected, client.get());
  if (s == NATS_OK) s = natsOptions_SetClosedCB(opts, &Callbacks::Closed, client.get());
  if (s == NATS_OK) s = natsOptions_SetErrorHandler(opts, &Callbacks::Error, client.get());
  if (s == NATS_OK) s = natsConnection_Connect(&client->conn_, opts);
  natsOptions_Destroy(opts);
  if (s != NATS_OK) {
    client->conn_ = nullptr;
    return Failed("bus: cannot connect to NATS at " + NatsUrlForLog(o.url), s);
  }
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.Wait = o.timeout.count();
  js_options.PublishAsync.ErrHandler = &Callbacks::PublishFailed;
  js_options.PublishAsync.ErrHandlerClosure = client.get();
  s = natsConnection_JetStream(&client->js_, client->conn_, &js_options);
  if (s != NATS_OK) return Failed("bus: NATS at " + NatsUrlForLog(o.url) + " has no JetStream (start nats-server with -js)", s);
  CAIRN_RETURN_IF_ERROR(client->EnsureStream());
  return client;
}

NatsStreamClient::~NatsStreamClient() {
  SetListener({});
  Unsubscribe();
  if (conn_ == nullptr) return;
  natsConnection_Close(conn_);
  {
    // The closed callback is the last one NATS makes on this connection.
    std::unique_lock lock(done_mu_);
    done_cv_.wait_for(lock, kCloseWait, [this] { return closed_; });
  }
  if (js_ != nullptr) jsCtx_Destroy(js_);
  natsConnection_Destroy(conn_);
}

Status NatsStreamClient::EnsureStream() {
  jsStreamInfo* info = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&info, js_, options_.stream.c_str(), nullptr, &jerr);
  const int64_t max_age = MaxAgeNanos(options_.max_age);
  if (s == NATS_OK) {
    bool same_age = info->Config == nullptr || info->Config->MaxAge == max_age;
    jsStreamInfo_Destroy(info);
    if (same_age) return Status::Ok();
  } else if (s != NATS_NOT_FOUND && jerr != JSStreamNotFoundErr) {
    return Failed("bus: cannot read the NATS stream " + options_.stream, s, jerr);
  }
  const bool exists = s == NATS_OK;
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = options_.stream.c_str();
  const char* subjects[] = {subject_.c_str()};
  config.Subjects = subjects;
  config.SubjectsLen = 1;
  config.Storage = js_FileStorage;
  config.MaxAge = max_age;
  info = nullptr;
  jerr = static_cast<jsErrCode>(0);
  s = exists ? js_UpdateStream(&info, js_, &config, nullptr, &jerr) : js_AddStream(&info, js_, &config, nullptr, &jerr);
  if (info != nullptr) jsStreamInfo_Destroy(info);
  if (s != NATS_OK && !(!exists && jerr == JSStreamNameExistErr)) {  // another process may make it at once
    return Failed("bus: cannot " + std::string(exists ? "update" : "make") + " the NATS stream " + options_.stream, s,
                  jerr);
  }
  CAIRN_LOG_INFO("bus: {} the NATS JetStream stream {} (subject {})", exists ? "updated" : "made", options_.stream,
                 subject_);
  return Status::Ok();
}

Status NatsStreamClient::PublishBatch(const std::vector<Outgoing>& messages) {
  publish_failures_ = 0;
  natsStatus s = NATS_OK;
  size_t sent = 0;
  for (; sent < messages.size() && s == NATS_OK; ++sent) {
    jsPubOptions pub;
    jsPubOptions_Init(&pub);
    pub.MsgId = messages[sent].msg_id.c_str();  // copied into the message's headers
    s = js_PublishAsync(js_, subject_.c_str(), messages[sent].body.data(), static_cast<int>(messages[sent].body.size()),
                        &pub);
  }
  jsPubOptions wait;
  jsPubOptions_Init(&wait);
  wait.MaxWait = options_.timeout.count();
  natsStatus completed = js_PublishAsyncComplete(js_, &wait);
  if (completed != NATS_OK) {
    // Drops what is still unacknowledged: the caller asks the stream where it stands, and a
    // message sent again later is dropped as a duplicate if it did arrive.
    natsMsgList pending;
    if (js_PublishAsyncGetPendingList(&pending, js_) == NATS_OK) natsMsgList_Destroy(&pending);
  }
  if (s != NATS_OK) return Failed("bus: cannot publish to NATS (message " + std::to_string(sent) + " of a batch)", s);
  if (completed != NATS_OK) return Failed("bus: NATS did not acknowledge a batch of " + std::to_string(messages.size()), completed);
  if (int64_t failed = publish_failures_.load(); failed > 0) {
    return Status(StatusCode::kUnavailable, "bus: NATS did not store " + std::to_string(failed) + " of a batch of " +
                                                std::to_string(messages.size()) + " messages");
  }
  return Status::Ok();
}

Result<int64_t> NatsStreamClient::LastPublishedSeq() {
  natsMsg* msg = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetLastMsg(&msg, js_, options_.stream.c_str(), subject_.c_str(), nullptr, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr) return int64_t{0};
  if (s != NATS_OK) return Failed("bus: cannot read the newest message of the NATS stream " + options_.stream, s, jerr);
  const char* id = nullptr;
  int64_t seq = 0;
  if (natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) == NATS_OK && id != nullptr) {
    std::string_view text(id);
    if (text.starts_with('m')) text.remove_prefix(1);  // a relay's marker "m<seq>": published up to seq
    std::from_chars(text.data(), text.data() + text.size(), seq);
  }
  natsMsg_Destroy(msg);
  return seq;
}

int64_t NatsStreamClient::MaxPayload() const { return natsConnection_GetMaxPayload(conn_); }

Status NatsStreamClient::SubscribeNew(OnMessage on_message) {
  std::lock_guard sub_lock(sub_mu_);
  UnsubscribeLocked();
  {
    std::lock_guard lock(message_mu_);
    on_message_ = std::move(on_message);
  }
  {
    std::lock_guard lock(done_mu_);
    sub_complete_ = false;
  }
  jsSubOptions sub_options;
  jsSubOptions_Init(&sub_options);
  sub_options.Config.DeliverPolicy = js_DeliverNew;
  sub_options.Config.AckPolicy = js_AckNone;
  sub_options.Config.FlowControl = true;
  // Missed heartbeats tell the listener that the consumer is gone (a server restart): it is
  // made again, from the newest message, and the log covers what passed meanwhile.
  sub_options.Config.Heartbeat = 1000 * kNanosPerMilli;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsSubscription* sub = nullptr;
  natsStatus s = js_Subscribe(&sub, js_, subject_.c_str(), &Callbacks::Message, this, nullptr, &sub_options, &jerr);
  if (s != NATS_OK) return Failed("bus: cannot subscribe to the NATS stream " + options_.stream, s, jerr);
  s = natsSubscription_SetOnCompleteCB(sub, &Callbacks::SubscriptionComplete, this);
  if (s != NATS_OK) {
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
    return Failed("bus: cannot watch the NATS subscription", s);
  }
  sub_ = sub;
  return Status::Ok();
}

void NatsStreamClient::Unsubscribe() {
  std::lock_guard sub_lock(sub_mu_);
  UnsubscribeLocked();
}

void NatsStreamClient::UnsubscribeLocked() {
  {
    std::lock_guard lock(message_mu_);
    on_message_ = nullptr;  // a callback already running finishes before this returns
  }
  if (sub_ == nullptr) return;
  natsSubscription_Unsubscribe(sub_);
  {
    // After the complete callback NATS touches the subscription no more.
    std::unique_lock lock(done_mu_);
    done_cv_.wait_for(lock, kCloseWait, [this] { return sub_complete_; });
  }
  natsSubscription_Destroy(sub_);
  sub_ = nullptr;
}

void NatsStreamClient::SetListener(Listener listener) {
  std::lock_guard lock(listener_mu_);
  listener_ = std::move(listener);
}

void NatsStreamClient::Tell(std::function<void()> Listener::*which) {
  std::lock_guard lock(listener_mu_);
  const std::function<void()>& call = listener_.*which;
  if (call) call();
}

}  // namespace cairn::bus::nats
