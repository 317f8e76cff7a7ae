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

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  Value() noexcept : rep_(Rep::kNull) {}  // null
  Value(const Value& other) noexcept : rep_(other.rep_), u_(other.u_) {
    if (IsHeap()) u_.heap->refs.fetch_add(1, std::memory_order_relaxed);
  }
  Value(Value&& other) noexcept : rep_(other.rep_), u_(other.u_) { other.rep_ = Rep::kNull; }
  Value& operator=(const Value& other) noexcept {
    Value copy(other);
    Swap(copy);
    return *this;
  }
  Value& operator=(Value&& other) noexcept {
    Value moved(std::move(other));
    Swap(moved);
    return *this;
  }
  ~Value() { Release(); }

  static Value Null() { return {}; }
  static Value Bool(bool b) { Value v(Rep::kBool); v.u_.b = b; return v; }
  static Value Int(int64_t i) { Value v(Rep::kInt); v.u_.i = i; return v; }
  static Value Uint(uint64_t u) { Value v(Rep::kUint); v.u_.u = u; return v; }
  static Value Double(double d) { Value v(Rep::kDouble); v.u_.d = d; return v; }
  static Value String(std::string s);
  // Borrowed: `s` must outlive every copy of the Value.
  static Value StringView(std::string_view s) { return View(Rep::kStringView, s); }
  static Value Bytes(std::string s);
  static Value BytesView(std::string_view s) { return View(Rep::kBytesView, s); }
  static Value List(ValueList items);
  // Borrowed: `items` must outlive every copy of the Value.
  static Value ListView(const ValueList* items) { Value v(Rep::kListRef); v.u_.list = items; return v; }
  // Borrowed: `array` must outlive every copy of the Value (and of the values read from it).
  static Value JsonList(const boost::json::array* array) { Value v(Rep::kJsonArray); v.u_.array = array; return v; }
  // Keys must be unique (bool, int, uint or string); the caller checks.
  static Value Map(MapEntries entries);
  static Value MapView(const MapEntries* entries) { Value v(Rep::kMapRef); v.u_.map = entries; return v; }
  static Value JsonMap(const boost::json::object* object) { Value v(Rep::kJsonObject); v.u_.object = object; return v; }
  static Value Time(Timestamp t) { Value v(Rep::kTimestamp); v.u_.timestamp = t; return v; }
  static Value Dur(Duration d) { Value v(Rep::kDuration); v.u_.duration = d; return v; }
  static Value Type(TypeName t) { Value v(Rep::kType); v.u_.type = t; return v; }
  static Value Error(std::string message);
  // A borrowed view of JSON: strings and containers are borrowed, numbers copied.
  static Value FromJson(const boost::json::value& json) {
    switch (json.kind()) {
      case boost::json::kind::bool_: return Bool(json.get_bool());
      case boost::json::kind::int64: return Int(json.get_int64());
      case boost::json::kind::uint64: return Uint(json.get_uint64());
      case boost::json::kind::double_: return Double(json.get_double());
      case boost::json::kind::string: return StringView({json.get_string().data(), json.get_string().size()});
      case boost::json::kind::array: return JsonList(&json.get_array());
      case boost::json::kind::object: return JsonMap(&json.get_object());
      default: return Null();
    }
  }

  Kind kind() const { return kKindOf[static_cast<size_t>(rep_)]; }
  bool is_error() const { return rep_ == Rep::kError; }

  // Accessors: calling one for another kind is a programming error.
  bool bool_value() const { return u_.b; }
  int64_t int_value() const { return u_.i; }
  uint64_t uint_value() const { return u_.u; }
  double double_value() const { return u_.d; }
  Timestamp timestamp_value() const { return u_.timestamp; }
  Duration duration_value() const { return u_.duration; }
  TypeName type_value() const { return u_.type; }
  // The text of a string or bytes value.
  std::string_view text() const {
    if (rep_ == Rep::kStringView || rep_ == Rep::kBytesView) return {u_.view.data, u_.view.size};
    return HeapText();
  }
  // The JSON object behind a map borrowed from JSON, or null: lets the evaluator look a field up
  // directly.
  const boost::json::object* json_object() const { return rep_ == Rep::kJsonObject ? u_.object : nullptr; }
  const std::string& error_message() const;

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

  // A borrowed view of this value's string, bytes, list or map (a copy for other kinds): copying
  // it touches no reference count. This value must outlive the view and its copies.
  Value Borrowed() const;

  // Owned strings, lists and maps live in one shared, immutable, reference-counted block (atomic
  // counts: a program's constants are read by many threads at once).
  struct Heap {
    std::atomic<uint32_t> refs{1};
    virtual ~Heap() = default;
  };

 private:
  // How the value is held; several representations share one Kind.
  // The reference-counted representations come last: IsHeap() is one comparison.
  enum class Rep : uint8_t {
    kNull, kBool, kInt, kUint, kDouble, kStringView, kBytesView, kListRef, kJsonArray, kMapRef, kJsonObject,
    kTimestamp, kDuration, kType, kString, kBytes, kList, kMap, kError,
  };
  static constexpr Kind kKindOf[] = {
      Kind::kNull, Kind::kBool, Kind::kInt, Kind::kUint, Kind::kDouble, Kind::kString, Kind::kBytes,
      Kind::kList, Kind::kList, Kind::kMap, Kind::kMap, Kind::kTimestamp, Kind::kDuration, Kind::kType,
      Kind::kString, Kind::kBytes, Kind::kList, Kind::kMap, Kind::kError};
  struct TextView {
    const char* data;
    size_t size;
  };
  union Payload {
    Payload() : i(0) {}
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    TextView view;
    const ValueList* list;
    const MapEntries* map;
    const boost::json::array* array;
    const boost::json::object* object;
    Timestamp timestamp;
    Duration duration;
    TypeName type;
    Heap* heap;
  };

  explicit Value(Rep rep) : rep_(rep) {}
  static Value View(Rep rep, std::string_view s) {
    Value v(rep);
    v.u_.view = {s.data(), s.size()};
    return v;
  }
  static Value FromHeap(Rep rep, Heap* heap) {
    Value v(rep);
    v.u_.heap = heap;
    return v;
  }
  bool IsHeap() const { return rep_ >= Rep::kString; }
  void Release() {
    if (IsHeap() && u_.heap->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete u_.heap;
  }
  void Swap(Value& other) noexcept {
    std::swap(rep_, other.rep_);
    std::swap(u_, other.u_);
  }
  std::string_view HeapText() const;
  const ValueList& Items() const;
  const MapEntries& Entries() const;

  Rep rep_;
  Payload u_;
};

// Comparison results of two values.
enum class Order { kLess, kEqual, kGreater, kUnordered };

// Lists and maps nested deeper than this (possible only in input JSON: expressions are bounded
// by Limits::max_depth) are not compared or converted, so no recursion can exhaust the stack.
inline constexpr int kMaxValueNesting = 1000;

// CEL equality (heterogeneous: values of different kinds are unequal, except that int, uint and
// double compare by numeric value; NaN equals nothing). Errors are handled by the caller. Lists
// or maps nested deeper than kMaxValueNesting compare unequal.
bool ValuesEqual(const Value& a, const Value& b);
// CEL ordering for `<` and friends: numbers across kinds, strings, bytes, bools, timestamps,
// durations. kUnordered for NaN; nullopt when the kinds cannot be compared (no such overload).
std::optional<Order> CompareValues(const Value& a, const Value& b);

// A human-readable rendering for messages and test failures (not CEL syntax for every kind).
std::string DebugString(const Value& value);

}  // namespace cairn::cel
