#include "cli/table_printer.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "cli/breadcrumb_table.h"

namespace cairn::cli {
namespace {

TEST(TablePrinterTest, PadsColumnsAlignsNumbersAndTrimsLines) {
  TablePrinter table({{"ID"}, {"N", 0, true}, {"NAME"}});
  table.AddRow({"a", "1", "first"});
  table.AddRow({"bbbb", "123", ""});
  EXPECT_EQ(table.row_count(), 2u);
  EXPECT_EQ(table.Render(),
            "ID      N  NAME\n"
            "a       1  first\n"
            "bbbb  123\n");
}

TEST(TablePrinterTest, HeaderOnlyWhenEmpty) {
  TablePrinter table({{"ID"}, {"TITLE"}});
  EXPECT_EQ(table.Render(), "ID  TITLE\n");
}

TEST(TablePrinterTest, MissingCellsAreEmptyAndExtraCellsIgnored) {
  TablePrinter table({{"A"}, {"B"}});
  table.AddRow({"x"});
  table.AddRow({"y", "z", "ignored"});
  EXPECT_EQ(table.Render(), "A  B\nx\ny  z\n");
}

TEST(TablePrinterTest, CapsWidthWithEllipsis) {
  TablePrinter table({{"T", 6}, {"X"}});
  table.AddRow({"abcdefghij", "1"});
  table.AddRow({"abcdef", "2"});
  EXPECT_EQ(table.Render(),
            "T       X\n"
            "abcde\u2026  1\n"
            "abcdef  2\n");
}

TEST(TablePrinterTest, CountsUtf8CodePoints) {
  TablePrinter table({{"NAME"}, {"X"}});
  table.AddRow({"caf\u00e9", "1"});  // 4 code points, 5 bytes
  table.AddRow({"abcde", "2"});
  EXPECT_EQ(table.Render(),
            "NAME   X\n"
            "caf\u00e9   1\n"
            "abcde  2\n");
}

TEST(FitCellTest, ReplacesControlCharactersAndNeverSplitsCodePoints) {
  EXPECT_EQ(FitCell("a\nb\tc\x1b[31m", 0), "a b c [31m");
  EXPECT_EQ(FitCell("\u00e9\u00e9\u00e9\u00e9", 3), "\u00e9\u00e9\u2026");
  EXPECT_EQ(FitCell("ab cdef", 4), "ab\u2026");  // no space left dangling before the ellipsis
  EXPECT_EQ(FitCell("abc", 3), "abc");
  EXPECT_EQ(DisplayWidth("\u00e9\u2026x"), 3u);
}

TEST(BreadcrumbTableTest, RendersListItems) {
  const auto items = boost::json::parse(R"([
    {"id":"0190a1b2-0000-7000-8000-000000000001","version":3,"schema_name":"note.v1","title":"Buy milk",
     "tags":["home","todo"],"updated_at":"2030-01-01T00:00:00.000000Z"},
    {"id":"0190a1b2-0000-7000-8000-000000000002","version":12,"schema_name":null,"title":"Line one\nline two",
     "tags":[],"updated_at":"2030-01-02T00:00:00.000000Z"}
  ])").as_array();
  EXPECT_EQ(RenderBreadcrumbTable(items),
            "ID                                    VERSION  SCHEMA   TITLE              TAGS       UPDATED_AT\n"
            "0190a1b2-0000-7000-8000-000000000001        3  note.v1  Buy milk           home,todo  2030-01-01T00:00:00.000000Z\n"
            "0190a1b2-0000-7000-8000-000000000002       12  -        Line one line two  -          2030-01-02T00:00:00.000000Z\n");
}

TEST(BreadcrumbTableTest, CapsLongTitlesAndToleratesOddItems) {
  const std::string long_title(100, 'x');
  boost::json::array items;
  items.push_back(boost::json::object{{"id", "i"}, {"title", long_title}});
  items.push_back(boost::json::value("not an object"));
  const std::string table = RenderBreadcrumbTable(items);
  EXPECT_NE(table.find(std::string(47, 'x') + "\u2026"), std::string::npos) << table;
  EXPECT_EQ(table.find(std::string(48, 'x')), std::string::npos) << table;
  EXPECT_NE(table.find("\n-   "), std::string::npos) << table;  // the odd item still gets a row
}

}  // namespace
}  // namespace cairn::cli
