#include "server/rcrt/rcrt_views.h"

#include <gtest/gtest.h>

#include <string>

namespace cairn::server::rcrt {
namespace {
namespace json = boost::json;

model::Event EventOf(std::string type) {
  model::Event event;
  event.seq = 7;
  event.type = std::move(type);
  event.breadcrumb_id = "b1";
  event.version = 3;
  event.schema_name = "travel.v1";
  event.title = "Trip";
  event.tags = {"travel"};
  event.owner_id = "acme";
  event.created_by = "planner";
  event.context = json::object{{"timezone", "Europe/London"}};
  return event;
}

TEST(RcrtEventFrame, CreatesAndUpdatesAreUpdatedDeletesAreDeleted) {
  json::object created = EventFrame(EventOf("breadcrumb.created"), 65536);
  EXPECT_EQ(created["type"], "breadcrumb.updated");
  EXPECT_EQ(created["breadcrumb_id"], "b1");
  EXPECT_EQ(created["owner_id"], "acme");
  EXPECT_EQ(created["version"], 3);
  EXPECT_EQ(created["schema_name"], "travel.v1");
  EXPECT_EQ(created["tags"], (json::array{"travel"}));
  EXPECT_EQ(created["updated_by"], "planner");
  EXPECT_EQ(created["context"].at("timezone"), "Europe/London");
  EXPECT_FALSE(created.contains("seq"));
  EXPECT_EQ(EventFrame(EventOf("breadcrumb.updated"), 65536)["type"], "breadcrumb.updated");
  EXPECT_EQ(EventFrame(EventOf("breadcrumb.deleted"), 65536)["type"], "breadcrumb.deleted");
}

TEST(RcrtEventFrame, LargeContextIsLeftOut) {
  json::object frame = EventFrame(EventOf("breadcrumb.updated"), 4);
  EXPECT_FALSE(frame.contains("context"));
  EXPECT_EQ(frame["context_omitted"], true);
}

TEST(RcrtRoles, ReferenceNamesMapOntoCairnRoles) {
  EXPECT_EQ(CairnRoleName("curator"), "admin");
  EXPECT_EQ(CairnRoleName("emitter"), "user");
  EXPECT_EQ(CairnRoleName("subscriber"), "reader");
  EXPECT_EQ(CairnRoleName("developer"), "developer");
  EXPECT_EQ(CairnRoleName("emperor"), "emperor");  // refused by the native route, named as given
}

}  // namespace
}  // namespace cairn::server::rcrt
