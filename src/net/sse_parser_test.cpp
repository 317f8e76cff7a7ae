#include "net/sse_parser.h"

#include <gtest/gtest.h>

#include <vector>

namespace cairn::net {
namespace {

std::vector<SseEvent> Drain(SseParser& parser) {
  std::vector<SseEvent> out;
  while (auto event = parser.Next()) out.push_back(std::move(*event));
  return out;
}

// Feeds `text` in pieces of `piece` bytes and returns every frame dispatched.
std::vector<SseEvent> FeedInPieces(std::string_view text, size_t piece, SseParser& parser) {
  std::vector<SseEvent> out;
  for (size_t i = 0; i < text.size(); i += piece) {
    EXPECT_TRUE(parser.Feed(text.substr(i, piece)).ok());
    for (auto& event : Drain(parser)) out.push_back(std::move(event));
  }
  return out;
}

TEST(SseParserTest, ParsesFramesWithIdAndData) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed(": stream open\n\nid: 7\ndata: {\"seq\":7}\n\nid: 8\ndata: {\"seq\":8}\n\n").ok());
  const auto events = Drain(parser);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "{\"seq\":7}");
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(events[0].last_event_id, "7");
  EXPECT_EQ(events[0].event, "");
  EXPECT_EQ(events[1].data, "{\"seq\":8}");
  EXPECT_EQ(parser.last_event_id(), "8");
  EXPECT_EQ(parser.comment_count(), 1u);
}

TEST(SseParserTest, FramesSplitAcrossChunksAtEveryByte) {
  const std::string stream = ": hi\n\nid: 1\ndata: {\"a\":1}\n\ndata: {\"type\":\"ping\"}\n\nid: 2\ndata: two\n\n";
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    SseParser parser;
    const auto events = FeedInPieces(stream, piece, parser);
    ASSERT_EQ(events.size(), 3u) << "piece " << piece;
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[0].id, "1");
    EXPECT_EQ(events[1].data, "{\"type\":\"ping\"}");
    EXPECT_FALSE(events[1].id.has_value());
    EXPECT_EQ(events[1].last_event_id, "1") << "the last id persists over a frame without one";
    EXPECT_EQ(events[2].data, "two");
    EXPECT_EQ(events[2].id, "2");
  }
}

TEST(SseParserTest, NothingIsDispatchedBeforeTheBlankLine) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed("id: 3\ndata: x\n").ok());
  EXPECT_FALSE(parser.Next().has_value());
  EXPECT_EQ(parser.last_event_id(), "") << "an id counts once its frame is complete";
  ASSERT_TRUE(parser.Feed("\n").ok());
  auto event = parser.Next();
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->data, "x");
  EXPECT_EQ(parser.last_event_id(), "3");
}

TEST(SseParserTest, CrLfAndCrLineEndings) {
  const std::string stream = "id: 1\r\ndata: a\r\n\r\nid: 2\rdata: b\r\rdata: c\n\r\n";
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    SseParser parser;
    const auto events = FeedInPieces(stream, piece, parser);
    ASSERT_EQ(events.size(), 3u) << "piece " << piece;
    EXPECT_EQ(events[0].data, "a");
    EXPECT_EQ(events[0].id, "1");
    EXPECT_EQ(events[1].data, "b");
    EXPECT_EQ(events[1].id, "2");
    EXPECT_EQ(events[2].data, "c");
  }
}

TEST(SseParserTest, CrAtTheEndOfAChunkThenLfIsOneLineEnd) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed("data: a\r").ok());
  ASSERT_TRUE(parser.Feed("\n\r").ok());
  ASSERT_TRUE(parser.Feed("\n").ok());
  auto events = Drain(parser);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "a");
}

TEST(SseParserTest, CommentsAreSkippedAnywhere) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed(":keep-alive\n: another\ndata: a\n:inside a frame\ndata: b\n\n:\n\n").ok());
  const auto events = Drain(parser);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "a\nb");
  EXPECT_EQ(parser.comment_count(), 4u);
}

TEST(SseParserTest, MultiLineDataIsJoinedWithNewlines) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed("data: {\"a\":\ndata:1}\ndata\ndata:  two spaces\n\n").ok());
  const auto events = Drain(parser);
  ASSERT_EQ(events.size(), 1u);
  // "data:1" has no space to drop; "data" alone is an empty line; only one space is dropped.
  EXPECT_EQ(events[0].data, "{\"a\":\n1}\n\n two spaces");
}

TEST(SseParserTest, IdWithoutDataMovesOnlyTheLastEventId) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed("id: 41\n\nid: 42\n\n").ok());
  EXPECT_FALSE(parser.Next().has_value());
  EXPECT_EQ(parser.last_event_id(), "42");
  ASSERT_TRUE(parser.Feed("data: x\n\n").ok());
  auto event = parser.Next();
  ASSERT_TRUE(event.has_value());
  EXPECT_FALSE(event->id.has_value());
  EXPECT_EQ(event->last_event_id, "42");
}

TEST(SseParserTest, EmptyDataIsStillAFrame) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed("data:\n\n\n\n").ok());
  const auto events = Drain(parser);
  ASSERT_EQ(events.size(), 1u) << "blank lines without data dispatch nothing";
  EXPECT_EQ(events[0].data, "");
}

TEST(SseParserTest, EventRetryAndUnknownFields) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed("event: update\nretry: 2500\nfoo: bar\nretry: x\ndata: d\n\ndata: e\n\n").ok());
  const auto events = Drain(parser);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event, "update");
  EXPECT_EQ(events[1].event, "") << "the event type does not carry over";
  EXPECT_EQ(parser.retry_ms(), 2500);
}

TEST(SseParserTest, IdWithNulIsIgnored) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed("id: 5\n\n").ok());
  ASSERT_TRUE(parser.Feed(std::string_view("id: 6\0x\ndata: d\n\n", 17)).ok());
  auto event = parser.Next();
  ASSERT_TRUE(event.has_value());
  EXPECT_FALSE(event->id.has_value());
  EXPECT_EQ(parser.last_event_id(), "5");
}

TEST(SseParserTest, ByteOrderMarkAtTheStartIsSkipped) {
  const std::string stream = "\xEF\xBB\xBF" "data: a\n\n";
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    SseParser parser;
    const auto events = FeedInPieces(stream, piece, parser);
    ASSERT_EQ(events.size(), 1u) << "piece " << piece;
    EXPECT_EQ(events[0].data, "a");
  }
  SseParser parser;  // a stream that only starts like a BOM is kept as is
  ASSERT_TRUE(parser.Feed("\xEF").ok());
  ASSERT_TRUE(parser.Feed("data: b\n\n").ok());
  ASSERT_TRUE(parser.Feed("data: c\n\n").ok());
  auto events = Drain(parser);
  ASSERT_EQ(events.size(), 1u) << "the first line's field name is \"\\xEFdata\", not data";
  EXPECT_EQ(events[0].data, "c");
}

TEST(SseParserTest, ResetDropsAPartialFrameButKeepsTheLastEventId) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed("id: 9\ndata: whole\n\nid: 10\ndata: cut off").ok());
  parser.Reset();
  EXPECT_FALSE(parser.Next().has_value()) << "pending frames belong to the old connection";
  EXPECT_EQ(parser.last_event_id(), "9");
  ASSERT_TRUE(parser.Feed(": stream open\n\ndata: new\n\n").ok());
  auto event = parser.Next();
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->data, "new");
  EXPECT_EQ(event->last_event_id, "9") << "the uncompleted id 10 was dropped";
}

TEST(SseParserTest, OversizedFrameIsAnError) {
  SseParser parser(16);
  ASSERT_TRUE(parser.Feed("data: 0123456789\n").ok());
  const Status s = parser.Feed("data: 0123456789\n");
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(parser.Feed("\n").code(), StatusCode::kResourceExhausted) << "the parser stays failed";
  parser.Reset();
  EXPECT_TRUE(parser.Feed("data: ok\n\n").ok());
  EXPECT_TRUE(parser.Next().has_value());
}

TEST(SseParserTest, EndDispatchesAFrameCutOffWithoutItsBlankLine) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed("data: one\n\ndata: two\ndata: thr").ok());
  std::vector<SseEvent> before = Drain(parser);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].data, "one");
  ASSERT_TRUE(parser.End().ok());
  std::vector<SseEvent> after = Drain(parser);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].data, "two\nthr");
  ASSERT_TRUE(parser.End().ok());
  EXPECT_TRUE(Drain(parser).empty()) << "nothing is dispatched twice";
}

TEST(SseParserTest, EndWithoutPendingDataDispatchesNothing) {
  SseParser parser;
  ASSERT_TRUE(parser.Feed(": comment\nid: 7").ok());
  ASSERT_TRUE(parser.End().ok());
  EXPECT_TRUE(Drain(parser).empty());
  EXPECT_EQ(parser.last_event_id(), "7");
}

TEST(SseParserTest, EndReportsAnEarlierError) {
  SseParser parser(8);
  EXPECT_FALSE(parser.Feed("data: 0123456789").ok());
  Status end = parser.End();
  EXPECT_EQ(end.code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace cairn::net
