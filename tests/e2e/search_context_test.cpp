// fetch: "vector" and fetch: "search" subscriptions put the records most similar to the trigger
// into an agent's prompt, as the scripted LLM server sees it.
#include "agent_support.h"

namespace cairn::e2e {
namespace {

class e2e_search_context : public AgentTest {
 protected:
  // The text of every message of the first chat request the LLM server got.
  std::string Prompt() {
    auto requests = LlmRequests();
    EXPECT_FALSE(requests.empty());
    if (requests.empty()) return "";
    std::string text;
    for (const auto& m : MessagesOf(requests.front())) text += StringAt(m.as_object(), "content") + "\n";
    return text;
  }
  void Notes() {
    for (const char* body : {
             R"({"title":"harbour note","schema_name":"note.v1","context":{"text":"the ferry to Cacilhas leaves the Lisbon harbour hourly"}})",
             R"({"title":"tax note","schema_name":"note.v1","context":{"text":"quarterly VAT filing is due in April"}})",
             R"({"title":"garden note","schema_name":"note.v1","context":{"text":"water the tomatoes every morning"}})"}) {
      CreateOk(json::parse(body));
    }
  }
};

TEST_F(e2e_search_context, FetchVectorPutsTheNearestNotesIntoThePrompt) {
  Script({Rule(json::object{{"last_role", "user"}}, json::object{{"content", "noted"}})});
  DefineAgent(json::object{{"agent_id", "librarian"}, {"system_prompt", "Answer from the notes."},
                           {"subscriptions", json::parse(R"({"selectors": [
      {"schema_name": "user.message.v1", "context_match": [{"path": "$.agent_id", "op": "eq", "value": "librarian"}]},
      {"role": "context", "key": "similar_notes", "schema_name": "note.v1", "fetch": {"method": "vector", "limit": 1}}]})")}});
  Notes();
  ASSERT_TRUE(SearchCaughtUp(client()));
  json::object answer = AwaitAnswer(Say("When does the ferry leave the Lisbon harbour?", "librarian"));
  EXPECT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  const std::string prompt = Prompt();
  EXPECT_NE(prompt.find("similar_notes"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("Cacilhas"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("VAT"), std::string::npos) << prompt;  // limit 1: only the nearest
  EXPECT_EQ(prompt.find("tomatoes"), std::string::npos) << prompt;
}

TEST_F(e2e_search_context, FetchSearchPutsFullTextMatchesIntoThePrompt) {
  Script({Rule(json::object{{"last_role", "user"}}, json::object{{"content", "noted"}})});
  DefineAgent(json::object{{"agent_id", "clerk"}, {"system_prompt", "Answer from the notes."},
                           {"subscriptions", json::parse(R"({"selectors": [
      {"schema_name": "user.message.v1", "context_match": [{"path": "$.agent_id", "op": "eq", "value": "clerk"}]},
      {"role": "context", "key": "matching_notes", "schema_name": "note.v1", "fetch": {"method": "search", "limit": 5}}]})")}});
  Notes();
  // Full text needs no worker: the index changed with each write.
  json::object answer = AwaitAnswer(Say("Is VAT filing due soon?", "clerk"));
  EXPECT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  const std::string prompt = Prompt();
  EXPECT_NE(prompt.find("matching_notes"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("quarterly VAT filing"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("tomatoes"), std::string::npos) << prompt;  // shares no word with the question
}

}  // namespace
}  // namespace cairn::e2e
