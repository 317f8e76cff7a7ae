#include "bus/nats/event_wire.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/access.h"

namespace cairn::bus::nats {
namespace {

model::Event FullEvent() {
  model::Event e;
  e.seq = 42;
  e.type = "breadcrumb.updated";
  e.breadcrumb_id = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
  e.version = 3;
  e.schema_name = "tool.request.v1";
  e.title = "ünïcode \"quoted\" title";
  e.tags = {"a", "b:c"};
  e.path = "notes/one";
  e.owner_id = "acme";
  e.created_by = "carol";
  e.trace = {"trace-1", "parent-id", 2};
  e.at = 1'790'000'000'123'456;
  e.context = boost::json::parse(R"({"n":1.5,"big":9007199254740993,"neg":-7,"list":[true,null,"x"]})");
  e.before = std::make_shared<const boost::json::value>(boost::json::parse(R"({"version":2,"title":"old"})"));
  e.visibility = "private";
  e.sensitivity = "secret";
  e.record_creator = "dave";
  e.acl = model::RecordAcl{std::vector<std::string>{"role:admin", "erin"}, std::nullopt};
  return e;
}

TEST(EventWireTest, AnEventDecodesToTheSameEvent) {
  model::Event e = FullEvent();
  auto decoded = DecodeStreamMessage(EncodeStreamEvent(e));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_TRUE(decoded->whole);
  const model::Event& d = decoded->event;
  EXPECT_EQ(decoded->seq, 42);
  EXPECT_EQ(d.seq, e.seq);
  EXPECT_EQ(d.type, e.type);
  EXPECT_EQ(d.breadcrumb_id, e.breadcrumb_id);
  EXPECT_EQ(d.version, e.version);
  EXPECT_EQ(d.schema_name, e.schema_name);
  EXPECT_EQ(d.title, e.title);
  EXPECT_EQ(d.tags, e.tags);
  EXPECT_EQ(d.path, e.path);
  EXPECT_EQ(d.owner_id, e.owner_id);
  EXPECT_EQ(d.created_by, e.created_by);
  EXPECT_EQ(d.trace.trace_id, e.trace.trace_id);
  EXPECT_EQ(d.trace.caused_by, e.trace.caused_by);
  EXPECT_EQ(d.trace.depth, e.trace.depth);
  EXPECT_EQ(d.at, e.at);
  EXPECT_EQ(d.context, e.context);
  EXPECT_TRUE(d.context.as_object().at("big").is_int64());  // not rounded through a double
  ASSERT_NE(d.before, nullptr);
  EXPECT_EQ(*d.before, *e.before);
  EXPECT_EQ(d.visibility, e.visibility);
  EXPECT_EQ(d.sensitivity, e.sensitivity);
  EXPECT_EQ(d.record_creator, e.record_creator);
  EXPECT_EQ(d.acl, e.acl);
  EXPECT_FALSE(d.context_unreadable);
  // Encoding the decoded event gives the same bytes: nothing was lost or added.
  EXPECT_EQ(EncodeStreamEvent(d), EncodeStreamEvent(e));
}

TEST(EventWireTest, AbsentOptionalFieldsStayAbsent) {
  model::Event e;
  e.seq = 7;
  e.type = "breadcrumb.deleted";
  e.breadcrumb_id = "x";
  e.context = nullptr;
  e.context_unreadable = true;
  auto decoded = DecodeStreamMessage(EncodeStreamEvent(e));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_FALSE(decoded->event.schema_name.has_value());
  EXPECT_FALSE(decoded->event.path.has_value());
  EXPECT_FALSE(decoded->event.acl.has_value());
  EXPECT_EQ(decoded->event.before, nullptr);
  EXPECT_TRUE(decoded->event.context.is_null());
  EXPECT_TRUE(decoded->event.context_unreadable);
}

TEST(EventWireTest, AMarkerCarriesOnlyItsSeq) {
  auto decoded = DecodeStreamMessage(EncodeStreamMarker(99));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_FALSE(decoded->whole);
  EXPECT_EQ(decoded->seq, 99);
}

TEST(EventWireTest, AnythingElseIsRefused) {
  std::string whole = EncodeStreamEvent(FullEvent());
  const std::vector<std::string> bad = {
      "",
      "not json",
      "[1,2]",
      R"({"seq":0,"marker":true})",
      R"({"seq":-3,"marker":true})",
      R"({"seq":"5","marker":true})",
      R"({"seq":5,"marker":false})",
      R"({"seq":5,"marker":true,"extra":1})",
      R"({"seq":5})",                           // neither a marker nor an event
      R"({"seq":1e400,"marker":true})",         // a number out of range
      whole.substr(0, whole.size() / 2),        // cut short
  };
  for (const std::string& body : bad) EXPECT_FALSE(DecodeStreamMessage(body).ok()) << body;
  // One field of the wrong kind is enough.
  for (const char* field : {"type", "id", "version", "title", "tags", "trace", "owner", "at", "acl", "visibility"}) {
    boost::json::object o = boost::json::parse(whole).as_object();
    o[field] = boost::json::array{1};
    EXPECT_FALSE(DecodeStreamMessage(boost::json::serialize(o)).ok()) << field;
  }
}

}  // namespace
}  // namespace cairn::bus::nats
