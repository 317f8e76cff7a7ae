// Agents end to end: the real server runs agent.def.v1 definitions against OpenAI-compatible
// servers — the independent npm `@dwmkerr/mock-llm` and the project's scripted fixture server
// (llm_servers.h; mock-llm's streaming mode drops tool calls, so streaming tool calls use the
// fixture) — and answers user.message.v1 breadcrumbs with agent.response.v1 (or an output
// schema's) breadcrumbs, calling tools through tool.request.v1 / tool.response.v1.
#include "agent_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

std::string MessageOf(const json::object& response) { return StringAt(ContextOf(response), "message"); }
std::string AnswerStatus(const json::object& response) { return StringAt(ContextOf(response), "status"); }
std::string AnswerErrorCode(const json::object& response) {
  const json::value* error = ContextOf(response).if_contains("error");
  return error && error->is_object() ? StringAt(error->as_object(), "code") : "";
}
std::string AnswerErrorMessage(const json::object& response) {
  const json::value* error = ContextOf(response).if_contains("error");
  return error && error->is_object() ? StringAt(error->as_object(), "message") : "";
}

class e2e_agents : public AgentTest {
 protected:
  json::object Agent(const std::string& id, json::object more = {}) {
    more["agent_id"] = id;
    if (!more.contains("system_prompt")) more["system_prompt"] = "You are a test agent.";
    return DefineAgent(more);
  }
};

TEST_F(e2e_agents, PlainAnswerStreamedWithTokensOnTheEventStream) {
  Script({Rule(Match({{"last_role", "user"}}), Text("Hello from the fixture, friend."))});
  Agent("greeter");
  SseClient tokens(server().url() + "/events/stream?types=agent.token&any_tags=session:s1");
  tokens.Start();
  ASSERT_TRUE(tokens.WaitForOpen(kToolWait));
  std::string id = Say("hi there", "greeter");
  json::object answer = AwaitAnswer(id);
  EXPECT_EQ(AnswerStatus(answer), "success") << JsonText(answer);
  EXPECT_EQ(MessageOf(answer), "Hello from the fixture, friend.");
  EXPECT_TRUE(HasTag(answer, "session:s1"));
  EXPECT_EQ(StringAt(answer, "created_by"), "agent:greeter");
  EXPECT_EQ(StringAt(json::value(answer.at("trace")).as_object(), "caused_by"), id);
  const json::value* usage = ContextOf(answer).if_contains("usage");
  ASSERT_TRUE(usage && usage->is_object());
  EXPECT_GT(IntAt(usage->as_object(), "total"), 0);

  // The deltas, in order, make the whole text; they carry no id (not stored, not resumable).
  std::string streamed;
  auto whole = [&](const std::vector<SseFrame>& frames) {
    streamed.clear();
    for (const auto& f : frames) {
      json::value v = f.Json();
      if (v.is_object() && StringAt(v.as_object(), "type") == "agent.token") {
        EXPECT_FALSE(f.IsEvent());
        streamed += StringAt(v.as_object(), "delta");
      }
    }
    return streamed == "Hello from the fixture, friend.";
  };
  EXPECT_TRUE(tokens.WaitFor(whole, kToolWait)) << streamed;

  // The request: system prompt, then the user's text; streamed.
  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(StringAt(requests[0], "model"), "fixture-model");
  EXPECT_TRUE(requests[0].at("stream").as_bool());
  const json::array& messages = MessagesOf(requests[0]);
  ASSERT_GE(messages.size(), 2u);
  EXPECT_EQ(StringAt(messages.front().as_object(), "content"), "You are a test agent.");
  EXPECT_EQ(StringAt(messages.back().as_object(), "content"), "hi there");
  EXPECT_FALSE(requests[0].contains("tools"));
}

TEST_F(e2e_agents, ToolCallThenAnswerStreaming) {
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"text", "ping"}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("The tool said {{last_tool_content}}"))});
  Agent("caller", json::object{{"tools", json::array{"echo"}}});
  std::string id = Say("use the tool", "caller");
  json::object answer = AwaitAnswer(id);
  EXPECT_EQ(AnswerStatus(answer), "success") << JsonText(answer);
  EXPECT_NE(MessageOf(answer).find("ping"), std::string::npos) << MessageOf(answer);
  EXPECT_EQ(IntAt(ContextOf(answer), "steps"), 2);

  // The request went through the tool protocol, from the agent, caused by the message.
  auto requests = ListAll("schema_name=tool.request.v1&tag=agent:caller&include_context=true");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(StringAt(ContextOf(requests[0]), "requested_by"), "agent:caller");
  EXPECT_EQ(StringAt(ContextOf(requests[0]), "tool"), "echo");
  json::object tool_answer = tools().AwaitResponse(StringAt(ContextOf(requests[0]), "request_id"));
  EXPECT_EQ(StatusOf(tool_answer), "success");

  // The model saw the tool offered, then the tool's result as a tool message for its call.
  auto llm_requests = LlmRequests();
  ASSERT_EQ(llm_requests.size(), 2u);
  const json::array& offered = llm_requests[0].at("tools").as_array();
  ASSERT_EQ(offered.size(), 1u);
  EXPECT_EQ(StringAt(offered[0].as_object().at("function").as_object(), "name"), "echo");
  auto tool_messages = ToolMessagesOf(llm_requests[1]);
  ASSERT_EQ(tool_messages.size(), 1u);
  EXPECT_NE(StringAt(tool_messages[0], "content").find("ping"), std::string::npos);

  // The run is recorded with its usage and steps; its snapshots hold the conversation.
  json::object execution = tools().AwaitExecution(id);
  EXPECT_EQ(StringAt(ContextOf(execution), "status"), "completed");
  EXPECT_EQ(IntAt(ContextOf(execution), "step_count"), 2);
  std::string execution_id = StringAt(ContextOf(execution), "id");
  EXPECT_EQ(StringAt(ContextOf(answer), "execution_id"), execution_id);
  auto snapshots = ListAll("schema_name=agent.snapshot.v1&tag=execution:" + execution_id + "&include_context=true");
  ASSERT_GE(snapshots.size(), 3u);  // reply with the call, the tool's answer, the final reply
  EXPECT_EQ(StringAt(ContextOf(execution), "last_snapshot_id"), StringAt(snapshots.front(), "id"));
}

TEST_F(e2e_agents, TwoToolCallsInOneReplyAnsweredInOrder) {
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"text", "first"}}},
                                                                {"echo", json::object{{"text", "second"}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("both done"))});
  Agent("twice", json::object{{"tools", json::array{"echo"}}, {"stream", false}});
  json::object answer = AwaitAnswer(Say("call twice", "twice"));
  EXPECT_EQ(MessageOf(answer), "both done") << JsonText(answer);
  auto llm_requests = LlmRequests();
  ASSERT_EQ(llm_requests.size(), 2u);
  EXPECT_FALSE(llm_requests[0].at("stream").as_bool());
  const json::array& messages = MessagesOf(llm_requests[1]);
  // ... assistant (two calls), tool (first), tool (second), matched by call id.
  ASSERT_GE(messages.size(), 3u);
  const json::object& assistant = messages[messages.size() - 3].as_object();
  const json::array& calls = assistant.at("tool_calls").as_array();
  ASSERT_EQ(calls.size(), 2u);
  auto tool_messages = ToolMessagesOf(llm_requests[1]);
  ASSERT_EQ(tool_messages.size(), 2u);
  EXPECT_EQ(StringAt(tool_messages[0], "tool_call_id"), StringAt(calls[0].as_object(), "id"));
  EXPECT_EQ(StringAt(tool_messages[1], "tool_call_id"), StringAt(calls[1].as_object(), "id"));
  EXPECT_NE(StringAt(tool_messages[0], "content").find("first"), std::string::npos);
  EXPECT_NE(StringAt(tool_messages[1], "content").find("second"), std::string::npos);
}

TEST_F(e2e_agents, UnknownToolBadArgumentsAndToolErrorsGoBackToTheModel) {
  Script({Rule(Match({{"last_role", "user"}}),
               ToolCallsReply({{"launch_rockets", json::object{}},
                               {"echo", json::value("{not json")},
                               {"sleep", json::object{{"ms", "soon"}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("recovered"))});
  Agent("clumsy", json::object{{"tools", json::array{"echo", "sleep"}}});
  json::object answer = AwaitAnswer(Say("go", "clumsy"));
  EXPECT_EQ(AnswerStatus(answer), "success") << JsonText(answer);
  EXPECT_EQ(MessageOf(answer), "recovered");
  auto llm_requests = LlmRequests();
  ASSERT_EQ(llm_requests.size(), 2u);
  auto tool_messages = ToolMessagesOf(llm_requests[1]);
  ASSERT_EQ(tool_messages.size(), 3u);
  EXPECT_NE(StringAt(tool_messages[0], "content").find("unknown_tool"), std::string::npos);
  EXPECT_NE(StringAt(tool_messages[1], "content").find("invalid_arguments"), std::string::npos);
  EXPECT_NE(StringAt(tool_messages[2], "content").find("invalid_input"), std::string::npos);
  // Only the call that could be made became a request.
  auto requests = ListAll("schema_name=tool.request.v1&tag=agent:clumsy&include_context=true");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(StringAt(ContextOf(requests[0]), "tool"), "sleep");
}

TEST_F(e2e_agents, ServerErrorIsRetriedAndUnauthorizedFailsWithTheReason) {
  Script({Rule(Match({{"any_content_contains", "retry me"}}), json::object{{"status", 503}}, 1),
          Rule(Match({{"any_content_contains", "retry me"}}), Text("worked the second time")),
          Rule(Match({{"any_content_contains", "locked out"}}),
               json::object{{"status", 401}, {"body", json::object{{"error", json::object{{"message", "Incorrect API key provided"}}}}}})});
  Agent("retrier");
  json::object ok = AwaitAnswer(Say("retry me", "retrier"));
  EXPECT_EQ(MessageOf(ok), "worked the second time") << JsonText(ok);
  EXPECT_EQ(LlmRequests().size(), 2u);

  std::string denied_id = Say("locked out", "retrier");
  json::object denied = AwaitAnswer(denied_id);
  EXPECT_EQ(AnswerStatus(denied), "error");
  EXPECT_EQ(AnswerErrorCode(denied), "llm_error");
  EXPECT_NE(AnswerErrorMessage(denied).find("401"), std::string::npos) << AnswerErrorMessage(denied);
  EXPECT_NE(AnswerErrorMessage(denied).find("Incorrect API key"), std::string::npos) << AnswerErrorMessage(denied);
  EXPECT_EQ(LlmRequests().size(), 3u);  // not retried
  EXPECT_EQ(StringAt(ContextOf(tools().AwaitExecution(denied_id)), "status"), "failed");
}

TEST_F(e2e_agents, MaxIterationsStopsTheLoopAndSaysWhy) {
  Script({Rule(Match({}), ToolCallsReply({{"echo", json::object{{"text", "{{last_content}}"}}}}))});
  Agent("looper", json::object{{"tools", json::array{"echo"}}, {"max_iterations", 2}});
  json::object answer = AwaitAnswer(Say("loop", "looper"));
  EXPECT_EQ(AnswerStatus(answer), "success") << JsonText(answer);
  EXPECT_EQ(StringAt(ContextOf(answer), "stop_reason"), "max_iterations");
  EXPECT_NE(MessageOf(answer).find("max_iterations"), std::string::npos) << MessageOf(answer);
  EXPECT_EQ(LlmRequests().size(), 2u);
}

TEST_F(e2e_agents, TheSameCallThreeTimesStopsTheLoop) {
  Script({Rule(Match({}), ToolCallsReply({{"echo", json::object{{"text", "again"}}}}))});
  Agent("stuck", json::object{{"tools", json::array{"echo"}}});
  json::object answer = AwaitAnswer(Say("loop", "stuck"));
  EXPECT_EQ(StringAt(ContextOf(answer), "stop_reason"), "repeated_tool_call") << JsonText(answer);
  EXPECT_NE(MessageOf(answer).find("same arguments"), std::string::npos) << MessageOf(answer);
  EXPECT_EQ(LlmRequests().size(), 3u);
  // The third identical call was not run.
  EXPECT_EQ(ListAll("schema_name=tool.request.v1&tag=agent:stuck&include_context=true").size(), 2u);
}

TEST_F(e2e_agents, TokenBudgetStopsTheLoop) {
  json::object reply = ToolCallsReply({{"echo", json::object{{"text", "{{last_content}}"}}}});
  reply["usage"] = json::object{{"prompt_tokens", 500}, {"completion_tokens", 100}, {"total_tokens", 600}};
  Script({Rule(Match({}), reply)});
  Agent("spender", json::object{{"tools", json::array{"echo"}}, {"max_tokens_per_execution", 1000}});
  json::object answer = AwaitAnswer(Say("spend", "spender"));
  EXPECT_EQ(StringAt(ContextOf(answer), "stop_reason"), "token_budget") << JsonText(answer);
  EXPECT_EQ(IntAt(ContextOf(answer).at("usage").as_object(), "total"), 1200);
  EXPECT_EQ(LlmRequests().size(), 2u);
}

TEST_F(e2e_agents, AnAgentCannotDefineToolsOrAgents) {
  // The model tries to define a process tool through breadcrumb_create: refused, told to the model.
  json::object tool_def{{"title", "evil"}, {"schema_name", "tool.v1"},
                        {"context", json::object{{"name", "evil"}, {"runtime", "process"},
                                                 {"command", json::array{"sh", "-c", "id"}}}}};
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"breadcrumb_create", tool_def}})),
          Rule(Match({{"last_role", "tool"}}), Text("{{last_tool_content}}"))});
  Agent("writer", json::object{{"tools", json::array{"breadcrumb_create"}}});
  json::object answer = AwaitAnswer(Say("define a tool", "writer"));
  EXPECT_NE(MessageOf(answer).find("cannot be written by an executor"), std::string::npos) << JsonText(answer);
  EXPECT_TRUE(ListIds("schema_name=tool.v1&path=tools/evil").empty());
}

TEST_F(e2e_agents, AReplyCutOffAtTheTokenLimitSaysSo) {
  json::object reply = Text("The answer is forty");
  reply["finish_reason"] = "length";
  Script({Rule(Match({}), reply)});
  Agent("terse", json::object{{"max_tokens", 5}});
  json::object answer = AwaitAnswer(Say("count", "terse"));
  EXPECT_EQ(StringAt(ContextOf(answer), "stop_reason"), "length") << JsonText(answer);
  EXPECT_EQ(MessageOf(answer).rfind("The answer is forty", 0), 0u);
  EXPECT_NE(MessageOf(answer).find("cut off"), std::string::npos);
  EXPECT_EQ(IntAt(LlmRequests().at(0), "max_tokens"), 5);
}

TEST_F(e2e_agents, StructuredOutputWithOneRepairRound) {
  json::object schema = json::parse(R"({"type": "object", "required": ["priority"],
      "properties": {"priority": {"type": "string", "enum": ["low", "high"]}}})").as_object();
  Script({Rule(Match({{"last_content_contains", "does not satisfy"}, {"any_content_contains", "good"}}),
               Text("{\"priority\": \"high\"}")),
          Rule(Match({}), Text("{\"priority\": \"urgent!!\"}"))});
  Agent("triage", json::object{{"output", json::object{{"schema_name", "ticket.triage.v1"}, {"tags", json::array{"triage"}}, {"schema", schema}}}});
  std::string good = Say("good ticket", "triage");
  json::object output = AwaitAnswer(good, "ticket.triage.v1");
  EXPECT_EQ(ContextOf(output).at("priority"), "high") << JsonText(output);
  // The model is told the schema, and asked for a JSON object.
  auto first = LlmRequests().at(0);
  EXPECT_EQ(first.at("response_format"), json::parse(R"({"type": "json_object"})"));
  bool told = false;
  for (const auto& m : MessagesOf(first)) told = told || StringAt(m.as_object(), "content").find("\"enum\":[\"low\",\"high\"]") != std::string::npos;
  EXPECT_TRUE(told);
  EXPECT_TRUE(HasTag(output, "triage"));
  EXPECT_EQ(LlmRequests().size(), 2u);

  // Still wrong after the repair round: an error response naming the problem.
  json::object failed = AwaitAnswer(Say("bad ticket", "triage"));
  EXPECT_EQ(AnswerErrorCode(failed), "invalid_output") << JsonText(failed);
  EXPECT_NE(AnswerErrorMessage(failed).find("priority"), std::string::npos) << AnswerErrorMessage(failed);
  EXPECT_EQ(LlmRequests().size(), 4u);
}

TEST_F(e2e_agents, HistoryOfTheSessionBecomesConversationTurns) {
  Script({Rule(Match({{"last_content_contains", "first"}}), Text("answer one")),
          Rule(Match({}), Text("answer two"))});
  Agent("chatty", json::object{{"subscriptions", json::parse(R"({"selectors": [
      {"schema_name": "user.message.v1", "context_match": [{"path": "$.agent_id", "op": "eq", "value": "chatty"}]},
      {"role": "context", "key": "history", "fetch": {"method": "recent", "limit": 20}, "same_tag_prefix": "session:"}]})")}});
  AwaitAnswer(Say("first question", "chatty", "talk"));
  Say("unrelated", "nobody", "other");  // another session: not in the history
  AwaitAnswer(Say("second question", "chatty", "talk"));
  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 2u);
  std::vector<std::string> turns;
  for (const auto& m : MessagesOf(requests[1])) {
    std::string role = StringAt(m.as_object(), "role");
    if (role != "system") turns.push_back(role + ": " + StringAt(m.as_object(), "content"));
  }
  EXPECT_EQ(turns, (std::vector<std::string>{"user: first question", "assistant: answer one", "user: second question"}));
}

TEST_F(e2e_agents, InvalidDefinitionsAreRefusedAndWriteNothing) {
  auto before = StoreSnapshot();
  const char* bad[] = {
      R"({"system_prompt": "no id"})",
      R"({"agent_id": "has space"})",
      R"({"agent_id": "a", "max_iterations": 0})",
      R"({"agent_id": "a", "temperature": 3})",
      R"({"agent_id": "a", "tools": ["not a name"]})",
      R"({"agent_id": "a", "output": {"schema": {"type": "object"}}})",
      R"({"agent_id": "a", "stream": "yes"})",
      R"({"agent_id": "a", "colour": "red"})",
  };
  for (const char* context : bad) {
    auto response = client().Post("/breadcrumbs", JsonText(json::object{{"schema_name", "agent.def.v1"}, {"title", "x"}, {"context", json::parse(context)}}));
    EXPECT_TRUE(IsError(response, 422, "validation_failed", "context.*")) << context << " -> " << response.body;
  }
  EXPECT_EQ(StoreSnapshot(), before);
}

// The default agent without any provider configured: it answers, explaining what to set.
class e2e_agents_unconfigured : public ServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    return {"--default-agent=true", "--llm-providers", R"([{"name": "openai", "base_url": "https://api.openai.com/v1", "api_key_env": "CAIRN_E2E_UNSET_KEY"}])"};
  }
};

TEST_F(e2e_agents_unconfigured, DefaultAgentExplainsHowToConfigureAProvider) {
  ToolClient tools(server());
  json::object message = tools.Create(json::object{{"schema_name", "user.message.v1"}, {"title", "hello"},
                                                   {"tags", json::array{"session:x"}}, {"context", json::object{{"content", "hello"}}}});
  std::string id = StringAt(message, "id");
  json::object answer = tools.AwaitEvent("agent.response.v1", [&](const json::object& e) { return HasTag(e, "request:" + id); });
  EXPECT_EQ(AnswerErrorCode(answer), "provider_not_configured") << JsonText(answer);
  EXPECT_NE(AnswerErrorMessage(answer).find("CAIRN_LLM_BASE_URL"), std::string::npos) << AnswerErrorMessage(answer);
  EXPECT_EQ(StringAt(answer, "created_by"), "agent:default-chat-assistant");
  EXPECT_EQ(ListIds("schema_name=agent.def.v1").size(), 1u);
}

// The independent mock server from the npm registry (non-streaming, as its streaming mode drops
// tool calls).
class e2e_agents_mock_llm : public ToolTest {
 protected:
  void SetUp() override {
    json::array rules{
        MockLlm::ToolCallRule("body.messages[-1].role == 'user'", "echo", json::object{{"text", "from mock"}}),
        MockLlm::AnswerRule("body.messages[-1].role == 'tool'", "mock saw the tool"),
    };
    mock_ = std::make_unique<MockLlm>(MockLlm::Config(std::move(rules)));
    ASSERT_TRUE(mock_->Start()) << mock_->error();
    ToolTest::SetUp();
  }
  std::vector<std::string> ServerArgs() const override { return {"--llm-base-url", mock_->base_url(), "--llm-model", "mock"}; }
  std::unique_ptr<MockLlm> mock_;
};

TEST_F(e2e_agents_mock_llm, ToolCallThenFinalAnswer) {
  tools().Create(json::object{{"schema_name", "agent.def.v1"}, {"title", "agent"},
                              {"context", json::object{{"agent_id", "mocked"}, {"tools", json::array{"echo"}}, {"stream", false}}}});
  json::object message = tools().Create(json::object{{"schema_name", "user.message.v1"}, {"title", "m"},
                                                     {"context", json::object{{"content", "please echo"}, {"agent_id", "mocked"}}}});
  std::string id = StringAt(message, "id");
  json::object answer = tools().AwaitEvent("agent.response.v1", [&](const json::object& e) { return HasTag(e, "request:" + id); });
  EXPECT_EQ(MessageOf(answer), "mock saw the tool") << JsonText(answer);
  auto requests = ListAll("schema_name=tool.request.v1&tag=agent:mocked&include_context=true");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(ContextOf(requests[0]).at("input"), json::parse(R"({"text":"from mock"})"));
  EXPECT_EQ(mock_->ChatRequestCount(), 2);
}

TEST_F(e2e_agents_mock_llm, PlainAnswerStreamed) {
  json::array rules{MockLlm::AnswerRule("body.messages[-1].role == 'user'", "a streamed answer from mock-llm")};
  ASSERT_TRUE(mock_->SetConfig(MockLlm::Config(std::move(rules))));
  tools().Create(json::object{{"schema_name", "agent.def.v1"}, {"title", "agent"},
                              {"context", json::object{{"agent_id", "plain"}}}});
  json::object message = tools().Create(json::object{{"schema_name", "user.message.v1"}, {"title", "m"},
                                                     {"context", json::object{{"content", "hi"}, {"agent_id", "plain"}}}});
  std::string id = StringAt(message, "id");
  json::object answer = tools().AwaitEvent("agent.response.v1", [&](const json::object& e) { return HasTag(e, "request:" + id); });
  EXPECT_EQ(MessageOf(answer), "a streamed answer from mock-llm") << JsonText(answer);
}

}  // namespace
}  // namespace cairn::e2e
