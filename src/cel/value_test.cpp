#include "cel/value.h"

#include "cel/functions.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cmath>

namespace cairn::cel {
namespace {

TEST(CelValue, NumbersCompareAcrossKinds) {
  EXPECT_TRUE(ValuesEqual(Value::Int(1), Value::Uint(1)));
  EXPECT_TRUE(ValuesEqual(Value::Int(1), Value::Double(1.0)));
  EXPECT_FALSE(ValuesEqual(Value::Int(-1), Value::Uint(UINT64_MAX)));
  EXPECT_FALSE(ValuesEqual(Value::Double(NAN), Value::Double(NAN)));
  EXPECT_EQ(CompareValues(Value::Int(-1), Value::Uint(0)), Order::kLess);
  EXPECT_EQ(CompareValues(Value::Double(NAN), Value::Int(0)), Order::kUnordered);
  EXPECT_FALSE(CompareValues(Value::Int(1), Value::String("1")).has_value());
  EXPECT_FALSE(ValuesEqual(Value::Int(1), Value::String("1")));
}

TEST(CelValue, BorrowedJsonMapsFindKeysWithoutCopying) {
  boost::json::value json = boost::json::parse(R"({"a": {"b": [1, "x"]}})");
  Value root = Value::FromJson(json);
  ASSERT_EQ(root.kind(), Kind::kMap);
  auto a = root.MapFind(Value::String("a"));
  ASSERT_TRUE(a);
  auto list = a->MapFind(Value::String("b"));
  ASSERT_TRUE(list && list->kind() == Kind::kList);
  EXPECT_EQ(list->ListAt(1).text().data(), json.at("a").at("b").at(1).as_string().data()) << "borrowed, not copied";
  EXPECT_FALSE(root.MapFind(Value::Int(1))) << "JSON objects have string keys only";
}

TEST(CelValue, OwnedMapsFindNumericKeysAcrossKinds) {
  Value m = Value::Map({{Value::Int(1), Value::String("one")}, {Value::String("k"), Value::Bool(true)}});
  EXPECT_TRUE(m.MapFind(Value::Uint(1)));
  EXPECT_TRUE(m.MapFind(Value::Double(1.0)));
  EXPECT_FALSE(m.MapFind(Value::Double(1.5)));
  EXPECT_TRUE(ValuesEqual(Value::Map({{Value::String("k"), Value::Bool(true)}, {Value::Uint(1), Value::String("one")}}), m));
}

TEST(CelValue, DoublesPrintAsGoPrintsThem) {
  EXPECT_EQ(FormatDouble(123.456), "123.456");
  EXPECT_EQ(FormatDouble(-0.0045), "-0.0045");
  EXPECT_EQ(FormatDouble(123456.0), "123456");
  EXPECT_EQ(FormatDouble(1e6), "1e+06");
  EXPECT_EQ(FormatDouble(1234567.0), "1.234567e+06");
  EXPECT_EQ(FormatDouble(0.0001), "0.0001");
  EXPECT_EQ(FormatDouble(0.00001), "1e-05");
  EXPECT_EQ(FormatDouble(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatDouble(1.0 / 0.0), "+Inf");
}

}  // namespace
}  // namespace cairn::cel
