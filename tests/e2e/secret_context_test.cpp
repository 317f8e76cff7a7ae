// `sensitivity: secret` records never reach an LLM prompt unless the agent's definition sets
// allow_secret_context (docs/security.md "Record access"), as the scripted LLM server sees it.
#include "agent_support.h"

namespace cairn::e2e {
namespace {

class e2e_secret_context : public AgentTest {
 protected:
  // The text of every message of every chat request the LLM server got.
  std::string Prompts() {
    std::string text;
    for (const auto& request : LlmRequests()) {
      for (const auto& m : MessagesOf(request)) text += StringAt(m.as_object(), "content") + "\n";
    }
    return text;
  }
  void Define(const std::string& id, bool allow_secret) {
    json::object context{{"agent_id", id}, {"system_prompt", "Answer from the notes."},
                         {"subscriptions", json::parse(R"({"selectors": [
      {"schema_name": "user.message.v1", "context_match": [{"path": "$.agent_id", "op": "eq", "value": ")" + id + R"("}]},
      {"role": "context", "key": "notes", "schema_name": "note.v1", "fetch": {"method": "recent", "limit": 10}},
      {"role": "context", "key": "found", "schema_name": "note.v1", "fetch": {"method": "search", "limit": 10}}]})")}};
    if (allow_secret) context["allow_secret_context"] = true;
    DefineAgent(context);
  }
};

TEST_F(e2e_secret_context, ASecretRecordStaysOutOfThePromptUnlessTheAgentAllowsIt) {
  Script({Rule(json::object{{"last_role", "user"}}, json::object{{"content", "noted"}})});
  CreateOk(json::parse(R"({"title":"door note","schema_name":"note.v1","context":{"text":"the door code is public-knowledge-7"}})"));
  CreateOk(json::parse(R"({"title":"door secret","schema_name":"note.v1","sensitivity":"secret",
                           "context":{"text":"the door code is PINEAPPLE-42"}})"));
  Define("careful", false);
  json::object answer = AwaitAnswer(Say("What is the door code?", "careful"));
  EXPECT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  std::string prompts = Prompts();
  EXPECT_NE(prompts.find("public-knowledge-7"), std::string::npos) << prompts;
  EXPECT_EQ(prompts.find("PINEAPPLE-42"), std::string::npos) << prompts;

  ASSERT_TRUE(llm().ClearRequests());
  Define("trusted", true);
  answer = AwaitAnswer(Say("What is the door code?", "trusted"));
  EXPECT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  prompts = Prompts();
  EXPECT_NE(prompts.find("PINEAPPLE-42"), std::string::npos) << prompts;
}

TEST_F(e2e_secret_context, ASecretTriggerIsWithheldAndTheFlagIsValidated) {
  Script({Rule(json::object{{"last_role", "user"}}, json::object{{"content", "noted"}})});
  Define("careful", false);
  json::object said = CreateOk(json::object{{"title", "ask"},
                                            {"schema_name", "user.message.v1"},
                                            {"sensitivity", "secret"},
                                            {"context", json::object{{"content", "my password is HUNTER2"}, {"agent_id", "careful"}}}});
  AwaitAnswer(StringAt(said, "id"));
  std::string prompts = Prompts();
  EXPECT_EQ(prompts.find("HUNTER2"), std::string::npos) << prompts;
  EXPECT_NE(prompts.find("allow_secret_context"), std::string::npos) << prompts;

  Response bad = client().Post("/breadcrumbs", JsonText(json::object{{"schema_name", "agent.def.v1"}, {"title", "x"},
                                                                   {"context", json::object{{"agent_id", "x"},
                                                                                            {"allow_secret_context", "yes"}}}}));
  EXPECT_EQ(bad.status, 422) << bad.Describe();
  EXPECT_EQ(StringAt(ObjectOf(bad).at("error").as_object(), "field"), "context.allow_secret_context") << bad.body;
}

}  // namespace
}  // namespace cairn::e2e
