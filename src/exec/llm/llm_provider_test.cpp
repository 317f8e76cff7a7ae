// The wire format (chat_json.h), the stream assembler and the provider registry. The provider
// against a loopback HTTP server is in openai_provider_test.cpp.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <map>

#include "exec/llm/chat_json.h"
#include "exec/llm/provider_registry.h"
#include "exec/llm/stream_assembler.h"

namespace cairn::exec::llm {
namespace {

namespace json = boost::json;

// A complete, comparable rendering of a reply.
std::string Dump(const ChatResponse& r) {
  return json::serialize(MessageToJson(r.message)) + " finish=" + r.finish_reason + " usage=" +
         std::to_string(r.usage.prompt) + "/" + std::to_string(r.usage.completion) + "/" + std::to_string(r.usage.total) +
         " model=" + r.model;
}

std::vector<std::string> Keys(const json::object& obj) {
  std::vector<std::string> out;
  for (const auto& kv : obj) out.emplace_back(kv.key());
  return out;
}

ChatMessage Msg(std::string role, std::string content) {
  ChatMessage m;
  m.role = std::move(role);
  m.content = std::move(content);
  return m;
}

ChatMessage AssistantToolCalls() {
  ChatMessage m;
  m.role = "assistant";
  m.has_content = false;
  m.tool_calls = {{"call_abc", "get_weather", R"({"city": "Paris"})"}, {"call_def", "get_time", "{not json"}};
  return m;
}

ChatMessage ToolResult() {
  ChatMessage m = Msg("tool", R"({"temp_c": 21})");
  m.tool_call_id = "call_abc";
  return m;
}

// ---- requests ----

TEST(ChatJsonTest, MinimalRequestMatchesTheRecordedBody) {
  ChatRequest request;
  request.model = "gpt-4o-mini";
  request.messages = {Msg("user", "Say hi")};
  request.stream = false;
  EXPECT_EQ(json::serialize(RequestToJson(request)),
            R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hi"}],"stream":false})");
}

TEST(ChatJsonTest, FullRequestMatchesTheRecordedBody) {
  ChatRequest request;
  request.model = "gpt-4o";
  request.messages = {Msg("system", "You are terse."), Msg("user", "Weather in Paris?"), AssistantToolCalls(),
                      ToolResult()};
  request.tools = {{"get_weather", "Current weather of a city",
                    json::parse(R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})")}};
  request.tool_choice = "auto";
  request.temperature = 0.25;
  request.max_tokens = 256;
  request.response_format = json::parse(R"({"type":"json_object"})");
  request.stream = true;
  json::object body = RequestToJson(request);
  const char* recorded = R"({
    "model": "gpt-4o",
    "messages": [
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
        {"id": "call_def", "type": "function", "function": {"name": "get_time", "arguments": "{not json"}}]},
      {"role": "tool", "content": "{\"temp_c\": 21}", "tool_call_id": "call_abc"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Current weather of a city",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
    "tool_choice": "auto",
    "temperature": 0.25,
    "max_tokens": 256,
    "response_format": {"type": "json_object"},
    "stream": true,
    "stream_options": {"include_usage": true}})";
  EXPECT_EQ(json::value(body), json::parse(recorded)) << json::serialize(body);
  EXPECT_EQ(Keys(body), (std::vector<std::string>{"model", "messages", "tools", "tool_choice", "temperature", "max_tokens",
                                                   "response_format", "stream", "stream_options"}));
  EXPECT_EQ(Keys(body["messages"].as_array()[2].as_object()), (std::vector<std::string>{"role", "content", "tool_calls"}));
}

TEST(ChatJsonTest, OptionalFieldsAreOmitted) {
  ChatRequest request;
  request.model = "m";
  json::object body = RequestToJson(request);  // stream defaults to true
  EXPECT_EQ(Keys(body), (std::vector<std::string>{"model", "messages", "stream", "stream_options"}));
  request.tool_choice = json::parse(R"({"type":"function","function":{"name":"f"}})");
  request.temperature = 0.0;
  EXPECT_EQ(RequestToJson(request)["temperature"], json::value(0.0));
  EXPECT_EQ(RequestToJson(request)["tool_choice"].at("function").at("name"), "f");
}

// ---- messages ----

TEST(ChatJsonTest, MessagesRoundTripExactly) {
  ChatMessage empty_content = Msg("assistant", "");
  ChatMessage both = AssistantToolCalls();
  both.has_content = true;
  both.content = "Let me check.";
  for (const ChatMessage& m : {Msg("system", "s"), Msg("user", "héllo \"quoted\"\n"), empty_content, AssistantToolCalls(),
                               both, ToolResult()}) {
    json::object j = MessageToJson(m);
    Result<ChatMessage> back = MessageFromJson(json::parse(json::serialize(j)));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(*back == m) << json::serialize(j);
    EXPECT_EQ(json::serialize(MessageToJson(*back)), json::serialize(j));
  }
  EXPECT_TRUE(MessageToJson(AssistantToolCalls())["content"].is_null());
  EXPECT_EQ(MessageToJson(empty_content)["content"], "");
}

TEST(ChatJsonTest, MessageFromJsonAcceptsEndpointVariants) {
  auto m = MessageFromJson(json::parse(R"({"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]})"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->content, "ab");
  m = MessageFromJson(json::parse(R"({"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f","arguments":{"x":1}}}]})"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(m->has_content);
  ASSERT_EQ(m->tool_calls.size(), 1u);
  EXPECT_EQ(m->tool_calls[0].arguments, R"({"x":1})");
}

TEST(ChatJsonTest, MessageFromJsonRefusesMalformedMessages) {
  for (const char* text : {R"([])", R"({"content":"x"})", R"({"role":7})", R"({"role":"user","content":5})",
                           R"({"role":"assistant","tool_calls":{}})", R"({"role":"assistant","tool_calls":[{"id":"x"}]})",
                           R"({"role":"tool","content":"x","tool_call_id":1})"}) {
    auto m = MessageFromJson(json::parse(text));
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << text;
  }
  auto m = MessageFromJson(json::parse(R"({"role":"user","content":5})"));
  EXPECT_NE(m.status().message().find("message.content"), std::string::npos) << m.status().message();
}

// ---- non-streaming replies ----

constexpr const char* kPlainReply = R"({
  "id": "chatcmpl-9xYz", "object": "chat.completion", "created": 1727000000, "model": "gpt-4o-mini-2024-07-18",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello! How can I help?", "refusal": null},
               "logprobs": null, "finish_reason": "stop"}],
  "usage": {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16,
            "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}},
  "system_fingerprint": "fp_e2bde53e6e"})";

constexpr const char* kToolCallReply = R"({
  "id": "chatcmpl-9xZa", "object": "chat.completion", "created": 1727000001, "model": "gpt-4o-2024-08-06",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_Q1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
      {"id": "call_Q2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}], "refusal": null},
    "logprobs": null, "finish_reason": "tool_calls"}],
  "usage": {"prompt_tokens": 82, "completion_tokens": 41, "total_tokens": 123}})";

TEST(ParseCompletionTest, PlainReply) {
  auto r = ParseCompletion(kPlainReply);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->message.role, "assistant");
  EXPECT_EQ(r->message.content, "Hello! How can I help?");
  EXPECT_TRUE(r->message.has_content);
  EXPECT_TRUE(r->message.tool_calls.empty());
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->usage.prompt, 9);
  EXPECT_EQ(r->usage.completion, 7);
  EXPECT_EQ(r->usage.total, 16);
  EXPECT_EQ(r->model, "gpt-4o-mini-2024-07-18");
  EXPECT_EQ(r->attempts, 1);
}

TEST(ParseCompletionTest, ToolCallReply) {
  auto r = ParseCompletion(kToolCallReply);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->message.has_content);
  ASSERT_EQ(r->message.tool_calls.size(), 2u);
  EXPECT_TRUE((r->message.tool_calls[0] == ToolCallRequest{"call_Q1", "get_weather", R"({"city":"Paris"})"}));
  EXPECT_TRUE((r->message.tool_calls[1] == ToolCallRequest{"call_Q2", "get_time", "{}"}));
  EXPECT_EQ(r->finish_reason, "tool_calls");
  EXPECT_EQ(r->usage.total, 123);
}

TEST(ParseCompletionTest, MissingUsageIsZeros) {
  // As llama.cpp and older Ollama builds answer: no usage, no role, no finish_reason.
  auto r = ParseCompletion(R"({"model":"llama3.2","choices":[{"message":{"content":"hi"}}]})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->message.role, "assistant");
  EXPECT_EQ(r->message.content, "hi");
  EXPECT_EQ(r->finish_reason, "");
  EXPECT_EQ(r->usage.prompt, 0);
  EXPECT_EQ(r->usage.completion, 0);
  EXPECT_EQ(r->usage.total, 0);
}

TEST(ParseCompletionTest, AnythingElseIsInternal) {
  for (const char* body : {"", "<html>Bad gateway</html>", "[]", "{}", R"({"choices":[]})", R"({"choices":[{}]})",
                           R"({"choices":[{"message":{"role":"assistant","content":3}}]})",
                           R"({"choices":[{"message":{"content":"x"},"finish_reason":1}]})"}) {
    auto r = ParseCompletion(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), StatusCode::kInternal) << body << ": " << r.status().ToString();
  }
  EXPECT_EQ(ParseCompletion("{}").status().message(), "reply is not a chat completion: no choices");
}

TEST(ParseCompletionTest, ErrorBodiesAreEndpointErrors) {
  auto r = ParseCompletion(R"({"error":{"message":"Provider returned error","code":502}})");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "endpoint reported an error: Provider returned error");
  EXPECT_EQ(ParseCompletion(R"({"error":{"message":"bad","code":400}})").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCompletion(R"({"error":{"message":"no","code":"invalid_api_key"}})").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(ParseCompletion(R"({"error":"overloaded"})").status().message(), "endpoint reported an error: overloaded");
}

TEST(ChatJsonTest, ErrorBodyText) {
  EXPECT_EQ(ErrorBodyText(R"({"error":{"message":"Incorrect API key provided.","type":"invalid_request_error"}})"),
            "Incorrect API key provided.");
  EXPECT_EQ(ErrorBodyText(R"({"detail":"Not Found"})"), "Not Found");
  EXPECT_EQ(ErrorBodyText("upstream\r\nconnect error\n"), "upstream  connect error");
  EXPECT_EQ(ErrorBodyText(""), "");
  std::string cut = ErrorBodyText(std::string(1000, 'x'), 50);
  EXPECT_EQ(cut, std::string(50, 'x') + "…");
  EXPECT_EQ(ErrorBodyText("ééé", 3), "é…");  // never splits a character
}

// ---- the stream assembler ----

// A recorded OpenAI stream: role chunk, content pieces (one splits "é" across nothing but puts a
// multi-byte character next to a piece boundary), a finish chunk, usage with empty choices.
const std::string kContentStream =
    ": keep-alive\n\n"
    R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"content":"Bonjour"},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\r\n\r\n"
    "event: message\nid: 7\n"
    R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"content":", café"},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data:{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"content":" ☕!"},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}})"
    "\n\n"
    "data: [DONE]\n\n";

const std::string kToolCallStream =
    R"(data: {"id":"c2","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"finish_reason":null}]})"
    "\n\n"
    R"(data: {"id":"c2","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"finish_reason":null}]})"
    "\n\n"
    R"(data: {"id":"c2","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Paris\"}"}}]},"finish_reason":null}]})"
    "\n\n"
    R"(data: {"id":"c2","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_def","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]})"
    "\n\n"
    R"(data: {"id":"c2","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"tz\":"}}]},"finish_reason":null}]})"
    "\n\n"
    R"(data: {"id":"c2","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"CET\"}"}}]},"finish_reason":null}]})"
    "\n\n"
    R"(data: {"id":"c2","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})"
    "\n\n"
    R"(data: {"id":"c2","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":80,"completion_tokens":40,"total_tokens":120}})"
    "\n\n"
    "data: [DONE]\n\n";

struct Assembled {
  Status feed;
  std::optional<Result<ChatResponse>> result;
  std::vector<std::string> deltas;
  std::string Render() const {
    if (!feed.ok()) return "feed error: " + feed.ToString();
    if (!result->ok()) return "finish error: " + result->status().ToString();
    return Dump(result->value());
  }
};

// Feeds `stream` cut at the given offsets.
Assembled Assemble(std::string_view stream, const std::vector<size_t>& cuts, StreamLimits limits = {}) {
  Assembled out;
  StreamAssembler assembler([&out](std::string_view d) { out.deltas.emplace_back(d); }, limits);
  size_t at = 0;
  for (size_t cut : cuts) {
    out.feed = assembler.Feed(stream.substr(at, cut - at));
    at = cut;
    if (!out.feed.ok()) return out;
  }
  out.feed = assembler.Feed(stream.substr(at));
  if (out.feed.ok()) out.result.emplace(assembler.Finish());
  return out;
}

// Every two-piece split, and one byte at a time, give the same reply and the same deltas.
void ExpectSplitInvariant(const std::string& stream, const Assembled& whole) {
  for (size_t i = 0; i <= stream.size(); ++i) {
    Assembled split = Assemble(stream, {i});
    ASSERT_EQ(split.Render(), whole.Render()) << "cut at byte " << i;
    ASSERT_EQ(split.deltas, whole.deltas) << "cut at byte " << i;
  }
  std::vector<size_t> every;
  for (size_t i = 1; i < stream.size(); ++i) every.push_back(i);
  Assembled bytewise = Assemble(stream, every);
  EXPECT_EQ(bytewise.Render(), whole.Render());
  EXPECT_EQ(bytewise.deltas, whole.deltas);
}

TEST(StreamAssemblerTest, ContentStream) {
  Assembled whole = Assemble(kContentStream, {});
  ASSERT_TRUE(whole.feed.ok()) << whole.feed.ToString();
  ASSERT_TRUE(whole.result->ok()) << whole.result->status().ToString();
  const ChatResponse& r = whole.result->value();
  EXPECT_EQ(r.message.role, "assistant");
  EXPECT_EQ(r.message.content, "Bonjour, café ☕!");
  EXPECT_TRUE(r.message.has_content);
  EXPECT_TRUE(r.message.tool_calls.empty());
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_EQ(r.usage.prompt, 12);
  EXPECT_EQ(r.usage.completion, 5);
  EXPECT_EQ(r.usage.total, 17);
  EXPECT_EQ(r.model, "gpt-4o-mini-2024-07-18");
  EXPECT_EQ(whole.deltas, (std::vector<std::string>{"Bonjour", ", café", " ☕!"}));
  ExpectSplitInvariant(kContentStream, whole);
}

TEST(StreamAssemblerTest, TwoToolCallsWithSplitArguments) {
  Assembled whole = Assemble(kToolCallStream, {});
  ASSERT_TRUE(whole.result && whole.result->ok()) << whole.Render();
  const ChatResponse& r = whole.result->value();
  EXPECT_FALSE(r.message.has_content);
  ASSERT_EQ(r.message.tool_calls.size(), 2u);
  EXPECT_TRUE((r.message.tool_calls[0] == ToolCallRequest{"call_abc", "get_weather", R"({"city": "Paris"})"}));
  EXPECT_TRUE((r.message.tool_calls[1] == ToolCallRequest{"call_def", "get_time", R"({"tz":"CET"})"}));
  EXPECT_EQ(r.finish_reason, "tool_calls");
  EXPECT_EQ(r.usage.total, 120);
  EXPECT_TRUE(whole.deltas.empty());
  ExpectSplitInvariant(kToolCallStream, whole);
}

TEST(StreamAssemblerTest, DoneEndsTheStreamAndTheLastEventNeedsNoBlankLine) {
  Assembled a = Assemble(kContentStream + "data: {not json}\n\n", {});
  EXPECT_EQ(a.Render(), Assemble(kContentStream, {}).Render());  // after [DONE] nothing counts
  // No [DONE] and no final blank line or line end: the last event still counts.
  Assembled b = Assemble(R"(data: {"choices":[{"delta":{"content":"x"},"finish_reason":"length"}]})", {});
  ASSERT_TRUE(b.result && b.result->ok()) << b.Render();
  EXPECT_EQ(b.result->value().message.content, "x");
  EXPECT_EQ(b.result->value().finish_reason, "length");
}

TEST(StreamAssemblerTest, Errors) {
  auto code_of = [](const Assembled& a) { return !a.feed.ok() ? a.feed.code() : a.result->status().code(); };
  // An error object in a data line (OpenRouter does this mid-stream).
  Assembled e = Assemble("data: {\"error\":{\"message\":\"Upstream overloaded\",\"code\":503}}\n\n", {});
  EXPECT_EQ(code_of(e), StatusCode::kUnavailable);
  EXPECT_NE(e.Render().find("Upstream overloaded"), std::string::npos) << e.Render();
  EXPECT_EQ(code_of(Assemble("data: {\"error\":{\"message\":\"too long\",\"code\":400}}\n\n", {})),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code_of(Assemble("data: {oops\n\n", {})), StatusCode::kInternal);
  EXPECT_EQ(code_of(Assemble("data: [1]\n\n", {})), StatusCode::kInternal);
  EXPECT_EQ(code_of(Assemble(": only a comment\n\n", {})), StatusCode::kInternal);
  EXPECT_EQ(code_of(Assemble("", {})), StatusCode::kInternal);
  // Cut off: no finish_reason and no [DONE].
  Assembled cut = Assemble(R"(data: {"choices":[{"delta":{"content":"par"}}]})" "\n\n", {});
  EXPECT_EQ(code_of(cut), StatusCode::kUnavailable);
  EXPECT_EQ(cut.deltas, (std::vector<std::string>{"par"}));

  StreamLimits small;
  small.max_line_bytes = 64;
  Assembled long_line = Assemble("data: " + std::string(100, 'x'), {10, 20, 30, 40, 50, 60, 70}, small);
  EXPECT_EQ(code_of(long_line), StatusCode::kInternal);
  EXPECT_NE(long_line.Render().find("longer than 64 bytes"), std::string::npos) << long_line.Render();
  small = {};
  small.max_assembled_bytes = 10;
  Assembled big = Assemble(kContentStream, {}, small);
  EXPECT_EQ(code_of(big), StatusCode::kInternal);
  EXPECT_NE(big.Render().find("larger than 10 bytes"), std::string::npos) << big.Render();
  small = {};
  small.max_tool_calls = 1;
  EXPECT_EQ(code_of(Assemble(kToolCallStream, {}, small)), StatusCode::kInternal);
}

TEST(StreamAssemblerTest, AnErrorSticks) {
  StreamAssembler assembler;
  EXPECT_FALSE(assembler.Feed("data: nope\n\n").ok());
  EXPECT_FALSE(assembler.Feed(kContentStream).ok());
  EXPECT_FALSE(assembler.Finish().ok());
}

// ---- the provider list and the registry ----

TEST(ProviderListTest, DefaultList) {
  auto list = ParseProviderList(DefaultProviderList());
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 3u);
  const std::vector<ProviderConfig>& l = *list;
  EXPECT_EQ(l[0].name, "openai");
  EXPECT_EQ(l[0].base_url, "https://api.openai.com/v1");
  EXPECT_EQ(l[0].api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(l[0].default_model, "gpt-4o-mini");
  EXPECT_EQ(l[1].name, "openrouter");
  EXPECT_EQ(l[1].base_url, "https://openrouter.ai/api/v1");
  EXPECT_EQ(l[1].api_key_env, "OPENROUTER_API_KEY");
  EXPECT_EQ(l[1].default_model, "openai/gpt-4o-mini");
  EXPECT_EQ(l[2].name, "ollama");
  EXPECT_EQ(l[2].base_url, "http://localhost:11434/v1");
  EXPECT_EQ(l[2].api_key_env, "");
  EXPECT_EQ(l[2].default_model, "llama3.2");
}

TEST(ProviderListTest, Errors) {
  const std::string ok = R"({"name":"a","base_url":"http://h/v1"})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[", "provider list: malformed JSON"},
      {R"({"name":"a"})", "must be a JSON array"},
      {"[" + ok + ",3]", "providers[1] must be an object"},
      {"[" + ok + R"(,{"base_url":"http://h"}])", "providers[1]: name must be"},
      {"[" + ok + R"(,{"name":"Big Name","base_url":"http://h"}])", "providers[1] (Big Name): name must be"},
      {"[" + ok + "," + ok + "]", "providers[1] (a): name 'a' is used twice"},
      {R"([{"name":"b","base_url":"ftp://h"}])", "providers[0] (b): base_url must be an http:// or https:// URL"},
      {R"([{"name":"b"}])", "providers[0] (b): base_url must be"},
      {R"([{"name":"b","base_url":"https://"}])", "providers[0] (b): base_url must be"},
      {R"([{"name":"b","base_url":"http://h x"}])", "providers[0] (b): base_url must be"},
      {R"([{"name":"b","base_url":"http://h","api_key_env":"1KEY"}])", "providers[0] (b): api_key_env must be"},
      {R"([{"name":"b","base_url":"http://h","api_key":"sk-1"}])", "providers[0] (b): unknown member 'api_key'"},
      {R"([{"name":"b","base_url":"http://h","default_model":7}])", "providers[0] (b): default_model must be a string"},
  };
  for (const auto& [text, expected] : cases) {
    auto list = ParseProviderList(text);
    ASSERT_FALSE(list.ok()) << text;
    EXPECT_EQ(list.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(list.status().message().find(expected), std::string::npos) << text << " → " << list.status().message();
  }
  auto empty = ParseProviderList("[]");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

std::unique_ptr<ProviderRegistry> MakeRegistry(std::map<std::string, std::string> env, RegistryOptions options = {}) {
  if (options.providers.empty()) options.providers = ParseProviderList(DefaultProviderList()).value();
  auto registry = ProviderRegistry::Create(std::move(options), [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
  EXPECT_TRUE(registry.ok()) << registry.status().ToString();
  return registry.ok() ? std::move(registry).value() : nullptr;
}

void ExpectResolves(const ProviderRegistry& r, std::string_view model, std::string_view provider, std::string_view name) {
  auto resolved = r.Resolve(model);
  ASSERT_TRUE(resolved.ok()) << model << ": " << resolved.status().ToString();
  EXPECT_EQ(resolved->provider_name, provider) << model;
  EXPECT_EQ(resolved->model, name) << model;
  ASSERT_NE(resolved->provider, nullptr);
  EXPECT_EQ(static_cast<OpenAiProvider*>(resolved->provider)->options().name, provider);
}

TEST(ProviderRegistryTest, ResolveRules) {
  auto r = MakeRegistry({{"OPENROUTER_API_KEY", "sk-or-secret-1"}, {"OPENAI_API_KEY", ""}});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->default_provider(), "openrouter");  // the first with a key; an empty variable is unset
  ExpectResolves(*r, "openrouter/google/gemini-2.0-flash-exp:free", "openrouter", "google/gemini-2.0-flash-exp:free");
  ExpectResolves(*r, "google/gemini-2.0-flash-exp:free", "openrouter", "google/gemini-2.0-flash-exp:free");
  ExpectResolves(*r, "", "openrouter", "openai/gpt-4o-mini");
  ExpectResolves(*r, "ollama/llama3.1:8b", "ollama", "llama3.1:8b");
  ExpectResolves(*r, "ollama/", "ollama", "llama3.2");
  auto openai = r->Resolve("openai/gpt-4o");
  ASSERT_FALSE(openai.ok());
  EXPECT_EQ(openai.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(openai.status().message(), "provider openai needs an API key: set OPENAI_API_KEY");

  auto resolved = r->Resolve("x");
  ASSERT_TRUE(resolved.ok());
  auto* provider = static_cast<OpenAiProvider*>(resolved->provider);
  EXPECT_EQ(provider->options().api_key, "sk-or-secret-1");
  EXPECT_EQ(provider->options().api_key_env, "OPENROUTER_API_KEY");
  EXPECT_EQ(provider->endpoint(), "https://openrouter.ai/api/v1/chat/completions");

  std::string described = r->Describe();
  EXPECT_EQ(described.find("sk-or-secret-1"), std::string::npos) << described;
  EXPECT_NE(described.find("OPENROUTER_API_KEY set"), std::string::npos) << described;
  EXPECT_NE(described.find("OPENAI_API_KEY not set"), std::string::npos) << described;
  EXPECT_NE(described.find("default: openrouter"), std::string::npos) << described;
}

TEST(ProviderRegistryTest, BothKeysPickTheFirstAndNoKeyNoDefault) {
  auto both = MakeRegistry({{"OPENROUTER_API_KEY", "k1"}, {"OPENAI_API_KEY", "k2"}});
  ASSERT_NE(both, nullptr);
  EXPECT_EQ(both->default_provider(), "openai");
  ExpectResolves(*both, "", "openai", "gpt-4o-mini");

  auto none = MakeRegistry({});
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->default_provider(), "");  // ollama needs no key but is never picked implicitly
  auto r = none->Resolve("gpt-4o");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(),
            "no LLM provider is configured: set CAIRN_LLM_BASE_URL (and CAIRN_LLM_API_KEY) for any OpenAI-compatible "
            "endpoint, or OPENAI_API_KEY / OPENROUTER_API_KEY, or name a provider in the model (ollama/llama3.2)");
  ExpectResolves(*none, "ollama/llama3.2", "ollama", "llama3.2");
  EXPECT_NE(none->Describe().find("default: none"), std::string::npos) << none->Describe();
}

// Keys kept as secrets: a provider whose key is each tenant's secret needs no variable, and an
// agent bringing its own key (own_key) needs none configured either.
TEST(ProviderRegistryTest, KeysFromSecretsNeedNoVariable) {
  RegistryOptions options;
  options.providers = ParseProviderList(
      R"([{"name":"shared","base_url":"https://llm.example/v1","api_key_secret":"LLM_KEY","default_model":"m"},)"
      R"({"name":"openai","base_url":"https://api.openai.com/v1","api_key_env":"OPENAI_API_KEY","default_model":"g"}])").value();
  auto r = MakeRegistry({}, options);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->default_provider(), "shared");
  auto shared = r->Resolve("");
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  EXPECT_EQ(shared->api_key_secret, "LLM_KEY");
  EXPECT_EQ(r->Resolve("openai/gpt-4o").status().code(), StatusCode::kFailedPrecondition);
  auto own = r->Resolve("openai/gpt-4o", /*own_key=*/true);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_TRUE(own->api_key_secret.empty());
  EXPECT_NE(r->Describe().find("secret LLM_KEY"), std::string::npos) << r->Describe();
  auto bad = ParseProviderList(R"([{"name":"x","base_url":"https://x.example","api_key_secret":"a b"}])");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("api_key_secret"), std::string::npos) << bad.status().message();
}

TEST(ProviderRegistryTest, CustomEndpointBecomesTheDefault) {
  RegistryOptions options;
  options.custom_base_url = "http://10.0.0.5:8000/v1/";
  options.custom_api_key = "custom-secret-key";
  options.custom_default_model = "qwen2.5";
  options.client.max_attempts = 2;
  auto r = MakeRegistry({{"OPENAI_API_KEY", "k"}}, options);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->default_provider(), "custom");
  ExpectResolves(*r, "", "custom", "qwen2.5");
  ExpectResolves(*r, "meta/llama-3-70b", "custom", "meta/llama-3-70b");
  ExpectResolves(*r, "openai/gpt-4o", "openai", "gpt-4o");
  auto resolved = r->Resolve("m");
  auto* provider = static_cast<OpenAiProvider*>(resolved->provider);
  EXPECT_EQ(provider->endpoint(), "http://10.0.0.5:8000/v1/chat/completions");
  EXPECT_EQ(provider->options().api_key, "custom-secret-key");
  EXPECT_EQ(provider->options().max_attempts, 2);  // the client options reach every provider
  EXPECT_EQ(r->Describe().find("custom-secret-key"), std::string::npos) << r->Describe();

  options.custom_default_model = "";
  r = MakeRegistry({}, options);
  ASSERT_NE(r, nullptr);
  auto no_model = r->Resolve("");
  EXPECT_EQ(no_model.status().code(), StatusCode::kInvalidArgument);
}

TEST(ProviderRegistryTest, ExplicitDefaultAndBadOptions) {
  RegistryOptions options;
  options.default_provider = "ollama";
  auto r = MakeRegistry({{"OPENAI_API_KEY", "k"}}, options);
  ASSERT_NE(r, nullptr);
  ExpectResolves(*r, "qwen2.5:7b", "ollama", "qwen2.5:7b");

  auto create = [](RegistryOptions o) {
    o.providers = ParseProviderList(DefaultProviderList()).value();
    return ProviderRegistry::Create(std::move(o), nullptr);
  };
  RegistryOptions bad;
  bad.default_provider = "anthropic";
  auto unknown = create(bad);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'anthropic' is not configured (known: openai, openrouter, ollama)"),
            std::string::npos)
      << unknown.status().message();
  bad = {};
  bad.custom_base_url = "localhost:8000";
  EXPECT_EQ(create(bad).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::exec::llm
