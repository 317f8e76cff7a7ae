#include "bus/nats/nats_stream_client.h"

#include <nats/nats.h>

#include <charconv>

#include "base/log.h"

namespace cairn::bus::nats {
namespace {

constexpr int64_t kNanosPerMilli = 1'000'000;

Status Failed(const std::string& what, natsStatus s, jsErrCode jerr = static_cast<jsErrCode>(0)) {
  std::string message = what + ": " + natsStatus_GetText(s);
  if (const char* detail = nats_GetLastError(nullptr); detail != nullptr && *detail != '\0') {
    message += std::string(" (") + detail + ")";
  }
  if (jerr != 0) message += " [JetStream error " + std::to_string(static_cast<int>(jerr)) + "]";
  return Status(StatusCode::kUnavailable, message);
}

}  // namespace

Status CheckStreamName(const std::string& name) {
  bool valid = !name.empty() && name.size() <= 64;
  for (char c : name) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
  }
  if (valid) return Status::Ok();
  return Status(StatusCode::kInvalidArgument,
                "nats_stream: expected 1 to 64 letters, digits, '_' or '-', got '" + name + "'", "nats_stream");
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
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts, &NatsStreamClient::OnReconnected, client.get());
  if (s == NATS_OK) s = natsConnection_Connect(&client->conn_, opts);
  natsOptions_Destroy(opts);
  if (s != NATS_OK) return Failed("bus: cannot connect to NATS at " + o.url, s);
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.Wait = o.timeout.count();
  s = natsConnection_JetStream(&client->js_, client->conn_, &js_options);
  if (s != NATS_OK) return Failed("bus: NATS at " + o.url + " has no JetStream (start nats-server with -js)", s);
  CAIRN_RETURN_IF_ERROR(client->EnsureStream());
  return client;
}

NatsStreamClient::~NatsStreamClient() {
  Unsubscribe();
  if (conn_ != nullptr) natsConnection_Close(conn_);
  if (js_ != nullptr) jsCtx_Destroy(js_);
  if (conn_ != nullptr) natsConnection_Destroy(conn_);
}

Status NatsStreamClient::EnsureStream() {
  jsStreamInfo* info = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&info, js_, options_.stream.c_str(), nullptr, &jerr);
  if (s == NATS_OK) {
    jsStreamInfo_Destroy(info);
    return Status::Ok();
  }
  if (s != NATS_NOT_FOUND && jerr != JSStreamNotFoundErr) {
    return Failed("bus: cannot read the NATS stream " + options_.stream, s, jerr);
  }
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = options_.stream.c_str();
  const char* subjects[] = {subject_.c_str()};
  config.Subjects = subjects;
  config.SubjectsLen = 1;
  config.Storage = js_FileStorage;
  config.MaxAge = options_.max_age.count() * kNanosPerMilli;
  s = js_AddStream(&info, js_, &config, nullptr, &jerr);
  if (s != NATS_OK && jerr != JSStreamNameExistErr) {  // another process may make it at the same moment
    return Failed("bus: cannot make the NATS stream " + options_.stream, s, jerr);
  }
  if (info != nullptr) jsStreamInfo_Destroy(info);
  CAIRN_LOG_INFO("bus: made the NATS JetStream stream {} (subject {})", options_.stream, subject_);
  return Status::Ok();
}

Status NatsStreamClient::Publish(int64_t seq, std::string_view body) {
  std::string id = std::to_string(seq);
  jsPubOptions pub;
  jsPubOptions_Init(&pub);
  pub.MsgId = id.c_str();
  pub.MaxWait = options_.timeout.count();
  jsPubAck* ack = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_Publish(&ack, js_, subject_.c_str(), body.data(), static_cast<int>(body.size()), &pub, &jerr);
  if (ack != nullptr) jsPubAck_Destroy(ack);
  if (s != NATS_OK) return Failed("bus: cannot publish event " + id + " to NATS", s, jerr);
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
    std::from_chars(text.data(), text.data() + text.size(), seq);
  }
  natsMsg_Destroy(msg);
  return seq;
}

int64_t NatsStreamClient::MaxPayload() const { return natsConnection_GetMaxPayload(conn_); }

Status NatsStreamClient::SubscribeNew(OnMessage on_message) {
  {
    std::lock_guard lock(listeners_mu_);
    on_message_ = std::move(on_message);
  }
  jsSubOptions sub_options;
  jsSubOptions_Init(&sub_options);
  sub_options.Ordered = true;
  sub_options.Config.DeliverPolicy = js_DeliverNew;
  sub_options.Config.Heartbeat = 1000 * kNanosPerMilli;  // a consumer lost in a server restart is noticed within seconds
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_Subscribe(&sub_, js_, subject_.c_str(), &NatsStreamClient::OnStreamMessage, this, nullptr,
                              &sub_options, &jerr);
  if (s != NATS_OK) return Failed("bus: cannot subscribe to the NATS stream " + options_.stream, s, jerr);
  return Status::Ok();
}

void NatsStreamClient::Unsubscribe() {
  {
    std::lock_guard lock(listeners_mu_);
    on_message_ = nullptr;  // a callback already running finishes before this returns
  }
  if (sub_ == nullptr) return;
  natsSubscription_Unsubscribe(sub_);
  natsSubscription_Destroy(sub_);
  sub_ = nullptr;
}

void NatsStreamClient::AddReconnectListener(std::function<void()> listener) {
  std::lock_guard lock(listeners_mu_);
  reconnect_listeners_.push_back(std::move(listener));
}

void NatsStreamClient::ClearReconnectListeners() {
  std::lock_guard lock(listeners_mu_);
  reconnect_listeners_.clear();
}

void NatsStreamClient::OnReconnected(natsConnection*, void* closure) {
  auto* self = static_cast<NatsStreamClient*>(closure);
  CAIRN_LOG_INFO("bus: reconnected to NATS");
  std::lock_guard lock(self->listeners_mu_);
  for (const auto& listener : self->reconnect_listeners_) listener();
}

void NatsStreamClient::OnStreamMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* self = static_cast<NatsStreamClient*>(closure);
  {
    std::lock_guard lock(self->listeners_mu_);
    if (self->on_message_) {
      self->on_message_(std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))));
    }
  }
  natsMsg_Destroy(msg);
}

}  // namespace cairn::bus::nats
