// cel::Value: one CEL value, small and cheap to copy.
//
// Scalars (null, bool, int, uint, double, timestamp, duration, type) are held inline. Strings,
// bytes, lists and maps are either owned (shared, immutable) or borrowed: a borrowed string points
// into the program's constants or into the caller's Boost.JSON input, and a borrowed list or map
// is a pointer to a boost::json::array / object whose elements are converted on access. Borrowing
// means evaluating against a large JSON document copies nothing; the price is the lifetime
// contract: a Value borrowed from an Activation's JSON is valid while that JSON is alive.
//
// Errors are values too (kind kError): evaluation never throws.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace cairn::cel {

enum class Kind : uint8_t {
  kNull, kBool, kInt, kUint, kDouble, kString, kBytes, kList, kMap, kTimestamp, kDuration, kType,
  kError,
};

// A point in time, UTC, 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z.
struct Timestamp {
  int64_t seconds = 0;  // since the Unix epoch
  int32_t nanos = 0;    // [0, 1e9)
  friend bool operator==(const Timestamp&, const Timestamp&) = default;
};

// A signed span of time within int64 nanoseconds (about ±292 years); nanos has the sign of seconds.
struct Duration {
  int64_t seconds = 0;
  int32_t nanos = 0;  // (-1e9, 1e9)
  friend bool operator==(const Duration&, const Duration&) = default;
};

// The name of a type, as a CEL `type` value: the result of type(x) and of the type identifiers.
enum class TypeName : uint8_t {
  kNull, kBool, kInt, kUint, kDouble, kString, kBytes, kList, kMap, kTimestamp, kDuration, kType,
};
std::string_view TypeNameString(TypeName type);

class Value;
using ValueList = std::vector<Value>;
using MapEntries = std::vector<std::pair<Value, Value>>;

class Value {
 public:
  Value() = default;  // null

  static Value Null() { return {}; }
  static Value Bool(bool b) { return Value(Rep(b)); }
  static Value Int(int64_t i) { return Value(Rep(i)); }
  static Value Uint(uint64_t u) { return Value(Rep(UintRep{u})); }
  static Value Double(double d) { return Value(Rep(d)); }
  static Value String(std::string s);
  // Borrowed: `s` must outlive every copy of the Value.
  static Value StringView(std::string_view s) { return Value(Rep(StrView{s})); }
  static Value Bytes(std::string s);
  static Value BytesView(std::string_view s) { return Value(Rep(BytesViewRep{s})); }
  static Value List(ValueList items);
  // Borrowed: `array` must outlive every copy of the Value (and of the values read from it).
  static Value JsonList(const boost::json::array* array) { return Value(Rep(JsonArr{array})); }
  // Keys must be unique (bool, int, uint or string); the caller checks.
  static Value Map(MapEntries entries);
  static Value JsonMap(const boost::json::object* object) { return Value(Rep(JsonObj{object})); }
  static Value Time(Timestamp t) { return Value(Rep(t)); }
  static Value Dur(Duration d) { return Value(Rep(d)); }
  static Value Type(TypeName t) { return Value(Rep(t)); }
  static Value Error(std::string message);
  // A borrowed view of JSON: strings and containers are borrowed, numbers copied.
  static Value FromJson(const boost::json::value& json);

  Kind kind() const;
  bool is_error() const { return kind() == Kind::kError; }

  // Accessors: calling one for another kind is a programming error.
  bool bool_value() const { return std::get<bool>(rep_); }
  int64_t int_value() const { return std::get<int64_t>(rep_); }
  uint64_t uint_value() const { return std::get<UintRep>(rep_).value; }
  double double_value() const { return std::get<double>(rep_); }
  Timestamp timestamp_value() const { return std::get<Timestamp>(rep_); }
  Duration duration_value() const { return std::get<Duration>(rep_); }
  TypeName type_value() const { return std::get<TypeName>(rep_); }
  // The text of a string or bytes value.
  std::string_view text() const;
  const std::string& error_message() const { return *std::get<ErrorRep>(rep_).message; }

  // Lists and maps.
  size_t size() const;
  Value ListAt(size_t index) const;
  // The value under `key`, heterogeneous numeric keys included (1 finds 1u and 1.0); nullopt if
  // absent or if the key kind cannot be a map key.
  std::optional<Value> MapFind(const Value& key) const;
  // The i-th key of a map, in its stored order.
  Value MapKeyAt(size_t index) const;
  Value MapValueAt(size_t index) const;

  // The TypeName of a non-error value.
  TypeName type_name() const;

 private:
  struct UintRep { uint64_t value; };
  struct StrView { std::string_view view; };
  struct StrOwned { std::shared_ptr<const std::string> text; };
  struct BytesViewRep { std::string_view view; };
  struct BytesOwned { std::shared_ptr<const std::string> text; };
  struct ListOwned { std::shared_ptr<const ValueList> items; };
  struct JsonArr { const boost::json::array* array; };
  struct MapOwned { std::shared_ptr<const MapEntries> entries; };
  struct JsonObj { const boost::json::object* object; };
  struct ErrorRep { std::shared_ptr<const std::string> message; };
  using Rep = std::variant<std::monostate, bool, int64_t, UintRep, double, StrView, StrOwned,
                           BytesViewRep, BytesOwned, ListOwned, JsonArr, MapOwned, JsonObj, Timestamp,
                           Duration, TypeName, ErrorRep>;
  explicit Value(Rep rep) : rep_(std::move(rep)) {}
  Rep rep_;
};

// Comparison results of two values.
enum class Order { kLess, kEqual, kGreater, kUnordered };

// CEL equality (heterogeneous: values of different kinds are unequal, except that int, uint and
// double compare by numeric value; NaN equals nothing). Errors are handled by the caller.
bool ValuesEqual(const Value& a, const Value& b);
// CEL ordering for `<` and friends: numbers across kinds, strings, bytes, bools, timestamps,
// durations. kUnordered for NaN; nullopt when the kinds cannot be compared (no such overload).
std::optional<Order> CompareValues(const Value& a, const Value& b);

// A human-readable rendering for messages and test failures (not CEL syntax for every kind).
std::string DebugString(const Value& value);

}  // namespace cairn::cel
