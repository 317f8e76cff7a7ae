// The OpenAI chat-completions wire format: requests, replies and messages as JSON.
//
// Pure functions, no I/O. The same message form is used on the wire and to store conversations
// in snapshots, so MessageToJson and MessageFromJson are exact inverses.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"
#include "exec/llm/llm_provider.h"

namespace cairn::exec::llm {

// Nesting allowed in anything we parse from an endpoint (replies, stream chunks, error bodies).
inline constexpr size_t kMaxReplyJsonDepth = 64;

// One message in OpenAI form, keys in this order:
//   role; content (a string, or null when !has_content); tool_calls (only when non-empty:
//   [{id, type: "function", function: {name, arguments}}]); tool_call_id (only when non-empty).
boost::json::object MessageToJson(const ChatMessage& message);

// The inverse of MessageToJson; MessageFromJson(MessageToJson(m)) == m for every message.
// Also accepts what endpoints send: a missing content (has_content false), content as an array of
// {type: "text", text} parts (concatenated), tool-call arguments given as a JSON object
// (serialised), a missing tool-call type. kInvalidArgument, naming the field, for anything else:
// not an object, no role, fields of the wrong kind.
Result<ChatMessage> MessageFromJson(const boost::json::value& json);

// The request body, keys in this order: model, messages, tools ([{type: "function", function:
// {name, description, parameters}}], omitted when empty), tool_choice (omitted when null),
// temperature, max_tokens (omitted when unset), response_format (omitted when null), stream, and
// with stream: stream_options {include_usage: true}.
boost::json::object RequestToJson(const ChatRequest& request);

// Parses a non-streaming reply: choices[0].message, choices[0].finish_reason, usage
// {prompt_tokens, completion_tokens, total_tokens} (zeros when absent) and model. `attempts` is
// left at 1. A body with an `error` member is the endpoint reporting an error: the Status of
// EndpointError. Anything else that is not a chat completion is kInternal with a short
// description ("reply is not a chat completion: no choices").
Result<ChatResponse> ParseCompletion(std::string_view body);

// {prompt_tokens, completion_tokens, total_tokens} as Usage; missing or non-numeric members (and
// a value that is not an object) count as zero.
Usage UsageFromJson(const boost::json::value& usage);

// The Status for an `error` member an endpoint sent with a 200 reply or inside a stream
// ({"message", "code", ...} or a plain string). Its numeric code, if any (a number or a numeric
// string), picks the code: 400/404/422 kInvalidArgument, 401/403 kFailedPrecondition, anything
// else (429, 5xx, none) kUnavailable. The message is "endpoint reported an error: <message>".
Status EndpointError(const boost::json::value& error);

// The most useful human-readable text of an HTTP error body: error.message, error (a string),
// message or detail of a JSON body; otherwise the body itself. Control characters become spaces
// and the result is at most `max_chars` bytes ("…" marks a cut). Empty for an empty body.
std::string ErrorBodyText(std::string_view body, size_t max_chars = 300);

}  // namespace cairn::exec::llm
