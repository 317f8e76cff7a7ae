#include "search/openai_embedder.h"

#include <boost/json/serialize.hpp>
#include <cmath>

#include "base/json_util.h"

namespace cairn::search {
namespace json = boost::json;

OpenAiEmbedder::OpenAiEmbedder(OpenAiEmbedderOptions options) : options_(std::move(options)) {
  std::string base = options_.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  endpoint_ = std::make_unique<net::OperatorEndpoint>(base + "/embeddings", options_.api_key, 8);
}

OpenAiEmbedder::~OpenAiEmbedder() = default;

Result<std::vector<std::vector<float>>> OpenAiEmbedder::Embed(const std::vector<std::string>& texts) {
  if (texts.empty() || texts.size() > kMaxEmbedBatch) {
    return Status::InvalidArgument("embed 1 to " + std::to_string(kMaxEmbedBatch) + " texts at a time");
  }
  json::array input;
  for (const std::string& text : texts) input.emplace_back(text);
  std::string body = json::serialize(json::object{{"model", options_.model}, {"input", std::move(input)}});
  net::HttpFetchRequest request = endpoint_->NewRequest(std::move(body));
  request.timeout = options_.timeout;
  request.max_response_bytes = options_.max_response_bytes;
  const std::string where = "embeddings from " + options_.name + ": ";
  Result<net::HttpFetchResponse> fetched = [&] {
    net::OperatorEndpoint::Lease lease(*endpoint_);
    return lease.connection().Fetch(request);
  }();
  if (!fetched.ok()) return Status(fetched.status().code(), where + endpoint_->Redact(fetched.status().message()));
  const net::HttpFetchResponse& response = *fetched;
  if (response.status == 408 || response.status == 429 || response.status >= 500) {
    return Status::Unavailable(where + "HTTP " + std::to_string(response.status));
  }
  if (response.status != 200) {
    // Redacted before it is cut, so no prefix of the key survives either.
    std::string text = endpoint_->Redact(response.body).substr(0, 300);
    return Status::Internal(where + "HTTP " + std::to_string(response.status) + ": " + text);
  }
  auto parsed = ParseJson(response.body, 8);
  const json::object* reply = parsed.ok() ? parsed->if_object() : nullptr;
  const json::value* data = reply ? reply->if_contains("data") : nullptr;
  if (data == nullptr || !data->is_array() || data->get_array().size() != texts.size()) {
    return Status::Internal(where + "the answer is not a \"data\" list of one embedding per input");
  }
  std::vector<std::vector<float>> vectors(texts.size());
  size_t dimension = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const json::object* item = data->get_array()[i].if_object();
    const json::value* embedding = item ? item->if_contains("embedding") : nullptr;
    const json::value* index = item ? item->if_contains("index") : nullptr;
    // Items carry their input's index; an endpoint may answer them out of order.
    size_t slot = index && index->is_int64() ? static_cast<size_t>(index->get_int64()) : i;
    if (embedding == nullptr || !embedding->is_array() || slot >= texts.size() || !vectors[slot].empty()) {
      return Status::Internal(where + "item " + std::to_string(i) + " is not an embedding of a distinct input");
    }
    std::vector<float>& v = vectors[slot];
    for (const auto& number : embedding->get_array()) {
      if (!number.is_number()) return Status::Internal(where + "an embedding holds a non-number");
      v.push_back(static_cast<float>(number.to_number<double>()));
      if (!std::isfinite(v.back())) return Status::Internal(where + "an embedding holds a number out of range");
    }
    if (v.empty() || (dimension != 0 && v.size() != dimension)) {
      return Status::Internal(where + "embeddings of different lengths");
    }
    dimension = v.size();
  }
  const size_t known = dimension_.load();
  if (known != 0 && known != dimension) {
    return Status::Internal(where + "dimension changed from " + std::to_string(known) + " to " +
                            std::to_string(dimension) + "; configure a new model name");
  }
  dimension_ = dimension;
  for (auto& v : vectors) Normalize(v);  // cosine on unit vectors: endpoints differ in whether they normalise
  return vectors;
}

}  // namespace cairn::search
