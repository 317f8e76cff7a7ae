// The agent's pure parts: prompt rendering (prompt.h, llm_hints included), the snapshot state's
// JSON round trip (agent_state.h) and execution ids.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "exec/agents/agent_executor.h"
#include "exec/agents/agent_state.h"
#include "exec/agents/prompt.h"

#include <map>

namespace cairn::exec {
namespace {

namespace json = boost::json;

json::object Record(const char* text) { return json::parse(text).as_object(); }

std::vector<std::string> Lines(const std::vector<llm::ChatMessage>& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) out.push_back(m.role + ": " + m.content);
  return out;
}

TEST(PromptTest, SystemPromptThenTheUsersText) {
  json::object context{{"trigger", Record(R"({"id": "t1", "title": "m", "schema_name": "user.message.v1",
                                             "context": {"content": "What is 2+2?"}})")}};
  EXPECT_EQ(Lines(BuildPrompt("Be brief.", context)),
            (std::vector<std::string>{"system: Be brief.", "user: What is 2+2?"}));
  EXPECT_EQ(Lines(BuildPrompt("", context)), (std::vector<std::string>{"user: What is 2+2?"}));
}

TEST(PromptTest, ContextKeysAreSectionsInOrderAndRecordsUseTheirHints) {
  json::object context;
  context["trigger"] = Record(R"({"id": "t1", "title": "ask", "schema_name": "user.message.v1",
                                  "context": {"message": "Summarise the page"}})");
  context["page"] = Record(R"({"id": "p", "title": "Docs", "schema_name": "browser.page.context.v1",
      "context": {"url": "https://x", "secret": "s3", "body": "hello"},
      "llm_hints": {"exclude": ["secret"]}})");
  context["notes"] = json::array{
      Record(R"({"id": "n1", "title": "Note", "schema_name": "note.v1", "context": {"text": "a"},
                 "llm_hints": {"template": "NOTE: {{text}}"}})")};
  auto messages = BuildPrompt("sys", context);
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[1].role, "system");
  EXPECT_EQ(messages[1].content,
            "Context:\n\n## page\nDocs [browser.page.context.v1]\n{\"url\":\"https://x\",\"body\":\"hello\"}"
            "\n\n## notes\nNote [note.v1]\nNOTE: a");
  EXPECT_EQ(messages[2].content, "Summarise the page");
  // Deterministic: the same context gives the same prompt.
  EXPECT_EQ(Lines(BuildPrompt("sys", context)), Lines(messages));
}

TEST(PromptTest, ATriggerWithoutTextIsRenderedAsTheUserMessage) {
  json::object context{{"trigger", Record(R"({"id": "t", "title": "Order 7", "schema_name": "order.v1",
                                             "context": {"total": 12}})")}};
  auto messages = BuildPrompt("", context);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].content, "Order 7 [order.v1]\n{\"total\":12}");
}

TEST(PromptTest, ConversationRecordsBecomeTurnsOldestFirstWithoutTheTrigger) {
  json::object context;
  context["trigger"] = Record(R"({"id": "m3", "schema_name": "user.message.v1", "context": {"content": "third"}})");
  context["history"] = json::array{  // newest first, as fetched
      Record(R"({"id": "m3", "schema_name": "user.message.v1", "context": {"content": "third"}})"),
      Record(R"({"id": "r1", "schema_name": "agent.response.v1", "context": {"status": "success", "message": "one"}})"),
      Record(R"({"id": "e1", "schema_name": "agent.response.v1", "context": {"status": "error"}})"),
      Record(R"({"id": "m1", "schema_name": "user.message.v1", "context": {"content": "first"}})")};
  EXPECT_EQ(Lines(BuildPrompt("", context)),
            (std::vector<std::string>{"user: first", "assistant: one", "user: third"}));
}

TEST(AgentStateTest, RoundTripsThroughJson) {
  AgentState state;
  state.step = 2;
  state.messages = {llm::ChatMessage{"user", "hi", true, {}, ""},
                    llm::ChatMessage{"assistant", "", false, {llm::ToolCallRequest{"c1", "echo", "{\"a\":1}"}}, ""},
                    llm::ChatMessage{"tool", "{\"a\":1}", true, {}, "c1"}};
  state.pending = {PendingCall{llm::ToolCallRequest{"c2", "sleep", "{}"}, "req-1", std::nullopt},
                   PendingCall{llm::ToolCallRequest{"c3", "nope", "{}"}, "", std::string("{\"error\":1}")}};
  state.usage = llm::Usage{10, 5, 15};
  state.call_counts = {{"echo\n{\"a\":1}", 1}};
  state.repair_asked = true;
  state.snapshots = 4;
  auto back = StateFromJson(json::parse(json::serialize(StateToJson(state))));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(json::serialize(StateToJson(*back)), json::serialize(StateToJson(state)));
  EXPECT_EQ(back->messages, state.messages);
  EXPECT_EQ(back->pending[0].request_id, "req-1");
  EXPECT_FALSE(back->pending[0].result);
  EXPECT_EQ(back->pending[1].result, "{\"error\":1}");
  EXPECT_FALSE(StateFromJson(json::parse(R"({"messages": 3})")).ok());
}

class MapReader final : public SnapshotReader {
 public:
  std::map<std::string, json::object> records;
  Result<json::object> Context(const std::string& id) override {
    auto it = records.find(id);
    if (it == records.end()) return Status::NotFound(id);
    return it->second;
  }
};

TEST(AgentStateTest, DeltasResolveToTheFullState) {
  AgentState state;
  MapReader reader;
  std::string parent;
  // Ten snapshots, one message more each; full at 1 and 9, deltas between.
  for (int n = 1; n <= 10; ++n) {
    state.messages.push_back(llm::ChatMessage{"user", "m" + std::to_string(n), true, {}, ""});
    bool full = (n - 1) % kFullSnapshotEvery == 0;
    size_t from = full ? 0 : state.messages.size() - 1;
    state.step = n;
    json::object context{{"parent_snapshot_id", parent.empty() ? json::value(nullptr) : json::value(parent)},
                         {"state", StateToJson(state, from)}};
    std::string id = "s" + std::to_string(n);
    reader.records[id] = context;
    parent = id;
  }
  EXPECT_EQ(reader.records["s5"].at("state").at("messages").as_array().size(), 1u);  // a delta stores one message
  auto full = LoadFullState(reader, "s10");
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->messages, state.messages);
  EXPECT_EQ(full->step, 10);
  EXPECT_EQ(full->last_snapshot_id, "s10");
  EXPECT_EQ(full->snapshot_messages, 10u);
  auto middle = LoadFullState(reader, "s6");
  ASSERT_TRUE(middle.ok());
  EXPECT_EQ(middle->messages.size(), 6u);
  EXPECT_EQ(middle->messages.back().content, "m6");
  // A delta whose parent is gone cannot be read.
  reader.records.erase("s3");
  EXPECT_FALSE(LoadFullState(reader, "s5").ok());
  // Reading a delta as a whole state is refused, not silently short.
  EXPECT_FALSE(StateFromJson(reader.records["s5"].at("state")).ok());
}

}  // namespace
}  // namespace cairn::exec
