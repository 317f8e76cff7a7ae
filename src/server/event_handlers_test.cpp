#include "server/event_handlers.h"

#include <gtest/gtest.h>

#include "server/sse_stream.h"
#include "support/fakes.h"

namespace cairn::server {
namespace {

class EventRoutesTest : public ::testing::Test {
 protected:
  EventRoutesTest() : bus_(100, 200) { AddEventRoutes(router_, bus_, store_, model::Limits{}); }

  Result<HttpResponse> Stream(std::vector<std::pair<std::string, std::string>> query,
                              std::vector<std::pair<std::string, std::string>> headers = {}) {
    HttpRequest request;
    request.method = "GET";
    request.path = "/events/stream";
    request.query = std::move(query);
    request.headers = std::move(headers);
    auto match = router_.Find(request.method, request.path);
    EXPECT_NE(match.route, nullptr);
    return match.route->handler(request);
  }
  int64_t AfterSeq(const Result<HttpResponse>& response) {
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    if (!response.ok()) return -1;
    auto spec = std::dynamic_pointer_cast<const SseSpec>(response->event_stream);
    EXPECT_NE(spec, nullptr);
    return spec ? spec->after_seq : -1;
  }

  test_support::FixedBoundsBus bus_;
  test_support::NullStore store_;
  Router router_;
};

TEST_F(EventRoutesTest, WithoutSinceTheStreamStartsAtTheNewestEvent) {
  EXPECT_EQ(AfterSeq(Stream({})), 200);
}

TEST_F(EventRoutesTest, SinceWithinTheRetainedLogIsTheResumePoint) {
  EXPECT_EQ(AfterSeq(Stream({{"since", "99"}})), 99);  // the event before the oldest retained one
  EXPECT_EQ(AfterSeq(Stream({{"since", "150"}})), 150);
  EXPECT_EQ(AfterSeq(Stream({{"since", "200"}})), 200);
}

TEST_F(EventRoutesTest, LastEventIdWinsOverSince) {
  EXPECT_EQ(AfterSeq(Stream({{"since", "120"}}, {{"last-event-id", "180"}})), 180);
}

TEST_F(EventRoutesTest, SinceOlderThanTheRetainedLogIsGone) {
  auto response = Stream({{"since", "50"}});
  EXPECT_EQ(response.status().code(), StatusCode::kGone);
  EXPECT_NE(response.status().message().find("100"), std::string::npos) << response.status().message();
}

TEST_F(EventRoutesTest, SinceAheadOfTheLogOrMalformedIsBadRequest) {
  EXPECT_EQ(Stream({{"since", "201"}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Stream({{"since", "abc"}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Stream({{"since", "-1"}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Stream({}, {{"last-event-id", ""}}).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(EventRoutesTest, ABadResumePointNamesWhereItCameFrom) {
  // From the header (with a valid `since` beside it, which the header overrides): the header is named.
  for (const char* value : {"abc", "201", "-1"}) {
    auto by_header = Stream({{"since", "120"}}, {{"last-event-id", value}});
    ASSERT_EQ(by_header.status().code(), StatusCode::kInvalidArgument) << value;
    EXPECT_EQ(by_header.status().field(), "Last-Event-ID") << by_header.status().ToString();
    EXPECT_TRUE(by_header.status().message().starts_with("Last-Event-ID: ")) << by_header.status().message();
    EXPECT_EQ(by_header.status().message().find("since"), std::string::npos) << by_header.status().message();
  }
  // From the query: `since` is named.
  auto by_query = Stream({{"since", "abc"}});
  EXPECT_EQ(by_query.status().field(), "since") << by_query.status().ToString();
  EXPECT_TRUE(by_query.status().message().starts_with("since: ")) << by_query.status().message();
}

TEST_F(EventRoutesTest, SelectorParametersAreValidated) {
  auto spec_of = [&](const Result<HttpResponse>& r) { return std::dynamic_pointer_cast<const SseSpec>(r->event_stream); };
  auto ok = Stream({{"schema_name", "note.v1"}, {"types", "breadcrumb.created"}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(spec_of(ok)->selector.schema_name, "note.v1");
  // Every mistake in a parameter is one status, 400, naming the parameter (or its part at fault).
  const std::pair<std::vector<std::pair<std::string, std::string>>, std::string> bad[] = {
      {{{"types", "breadcrumb.exploded"}}, "types[0]"},
      {{{"colour", "red"}}, "colour"},
      {{{"since", "1"}, {"since", "2"}}, "since"},
      {{{"schema_name", "a"}, {"schema_name", "b"}}, "schema_name"},
      {{{"since", "x"}}, "since"},
      {{{"context_match", "{"}}, "context_match"},
      {{{"selector_id", ""}}, "selector_id"},
  };
  for (const auto& [query, field] : bad) {
    auto refused = Stream(query);
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << field << ": " << refused.status().ToString();
    EXPECT_EQ(refused.status().field(), field) << refused.status().ToString();
  }
  EXPECT_TRUE(Stream({{"tag", "a"}, {"tag", "b"}}).ok());  // tag is repeatable
}

TEST_F(EventRoutesTest, TypesMayNameAgentToken) {
  auto spec_of = [&](const Result<HttpResponse>& r) { return std::dynamic_pointer_cast<const SseSpec>(r->event_stream); };
  auto only = Stream({{"types", "agent.token"}, {"any_tags", "session:s1"}});
  ASSERT_TRUE(only.ok()) << only.status().ToString();
  EXPECT_EQ(spec_of(only)->selector.types, (std::vector<std::string>{"agent.token"}));
  EXPECT_FALSE(model::SelectsStoredEvents(spec_of(only)->selector));
  auto both = Stream({{"types", "breadcrumb.created,agent.token"}});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_TRUE(model::SelectsStoredEvents(spec_of(both)->selector));
  EXPECT_TRUE(model::SelectsEphemeralEvents(spec_of(both)->selector));
  EXPECT_EQ(Stream({{"types", "agent.tokens"}}).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(EventRoutesTest, StoredSelectorIsExclusiveAndMustExist) {
  EXPECT_EQ(Stream({{"selector_id", "nope"}}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Stream({{"selector_id", "x"}, {"schema_name", "a"}}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::server
