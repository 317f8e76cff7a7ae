#include "cel/value.h"

#include <cmath>
#include <cstdio>

namespace cairn::cel {

std::string_view TypeNameString(TypeName type) {
  switch (type) {
    case TypeName::kNull: return "null_type";
    case TypeName::kBool: return "bool";
    case TypeName::kInt: return "int";
    case TypeName::kUint: return "uint";
    case TypeName::kDouble: return "double";
    case TypeName::kString: return "string";
    case TypeName::kBytes: return "bytes";
    case TypeName::kList: return "list";
    case TypeName::kMap: return "map";
    case TypeName::kTimestamp: return "google.protobuf.Timestamp";
    case TypeName::kDuration: return "google.protobuf.Duration";
    case TypeName::kType: return "type";
  }
  return "?";
}

namespace {

struct TextBlock final : Value::Heap {
  explicit TextBlock(std::string t) : text(std::move(t)) {}
  std::string text;
};
struct HeapList final : Value::Heap {
  explicit HeapList(ValueList i) : items(std::move(i)) {}
  ValueList items;
};
struct HeapMap final : Value::Heap {
  explicit HeapMap(MapEntries e) : entries(std::move(e)) {}
  MapEntries entries;
};

}  // namespace

Value Value::String(std::string s) { return FromHeap(Rep::kString, new TextBlock(std::move(s))); }
Value Value::Bytes(std::string s) { return FromHeap(Rep::kBytes, new TextBlock(std::move(s))); }
Value Value::List(ValueList items) { return FromHeap(Rep::kList, new HeapList(std::move(items))); }
Value Value::Map(MapEntries entries) { return FromHeap(Rep::kMap, new HeapMap(std::move(entries))); }
Value Value::Error(std::string message) { return FromHeap(Rep::kError, new TextBlock(std::move(message))); }

std::string_view Value::HeapText() const { return static_cast<const TextBlock*>(u_.heap)->text; }

const std::string& Value::error_message() const { return static_cast<const TextBlock*>(u_.heap)->text; }

const ValueList& Value::Items() const {
  return rep_ == Rep::kListRef ? *u_.list : static_cast<const HeapList*>(u_.heap)->items;
}
const MapEntries& Value::Entries() const {
  return rep_ == Rep::kMapRef ? *u_.map : static_cast<const HeapMap*>(u_.heap)->entries;
}

size_t Value::size() const {
  switch (rep_) {
    case Rep::kJsonArray: return u_.array->size();
    case Rep::kJsonObject: return u_.object->size();
    case Rep::kList: case Rep::kListRef: return Items().size();
    default: return Entries().size();
  }
}

Value Value::ListAt(size_t index) const {
  if (rep_ == Rep::kJsonArray) return FromJson((*u_.array)[index]);
  return Items()[index];
}

namespace {

// The key as an exact integer when it is a number with an integral value in range of either
// int64 or uint64 — so 1, 1u and 1.0 find the same entry.
struct NumericKey {
  bool negative;
  uint64_t magnitude;
};
std::optional<NumericKey> AsNumericKey(const Value& v) {
  switch (v.kind()) {
    case Kind::kInt: {
      int64_t i = v.int_value();
      return NumericKey{i < 0, i < 0 ? uint64_t(0) - uint64_t(i) : uint64_t(i)};
    }
    case Kind::kUint: return NumericKey{false, v.uint_value()};
    case Kind::kDouble: {
      double d = v.double_value();
      if (!std::isfinite(d) || d != std::trunc(d)) return std::nullopt;
      if (d >= 0 && d < 18446744073709551616.0) return NumericKey{false, uint64_t(d)};
      if (d < 0 && d >= -9223372036854775808.0) return NumericKey{true, uint64_t(0) - uint64_t(int64_t(d))};
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

bool KeysEqual(const Value& a, const Value& b) {
  auto na = AsNumericKey(a);
  if (na) {
    auto nb = AsNumericKey(b);
    return nb && na->negative == nb->negative && na->magnitude == nb->magnitude;
  }
  if (a.kind() != b.kind()) return false;
  if (a.kind() == Kind::kString) return a.text() == b.text();
  if (a.kind() == Kind::kBool) return a.bool_value() == b.bool_value();
  return false;
}

}  // namespace

std::optional<Value> Value::MapFind(const Value& key) const {
  if (rep_ == Rep::kJsonObject) {
    if (key.kind() != Kind::kString) return std::nullopt;  // JSON objects have string keys only
    auto it = u_.object->find(key.text());
    if (it == u_.object->end()) return std::nullopt;
    return FromJson(it->value());
  }
  for (const auto& [k, v] : Entries()) {
    if (KeysEqual(k, key)) return v;
  }
  return std::nullopt;
}

Value Value::MapKeyAt(size_t index) const {
  if (rep_ == Rep::kJsonObject) {
    const auto& entry = u_.object->begin()[index];
    return StringView(std::string_view(entry.key().data(), entry.key().size()));
  }
  return Entries()[index].first;
}

Value Value::MapValueAt(size_t index) const {
  if (rep_ == Rep::kJsonObject) return FromJson(u_.object->begin()[index].value());
  return Entries()[index].second;
}

Value Value::Borrowed() const {
  switch (rep_) {
    case Rep::kString: return StringView(text());
    case Rep::kBytes: return BytesView(text());
    case Rep::kList: return ListView(&Items());
    case Rep::kMap: return MapView(&Entries());
    default: return *this;
  }
}

TypeName Value::type_name() const {
  switch (kind()) {
    case Kind::kNull: return TypeName::kNull;
    case Kind::kBool: return TypeName::kBool;
    case Kind::kInt: return TypeName::kInt;
    case Kind::kUint: return TypeName::kUint;
    case Kind::kDouble: return TypeName::kDouble;
    case Kind::kString: return TypeName::kString;
    case Kind::kBytes: return TypeName::kBytes;
    case Kind::kList: return TypeName::kList;
    case Kind::kMap: return TypeName::kMap;
    case Kind::kTimestamp: return TypeName::kTimestamp;
    case Kind::kDuration: return TypeName::kDuration;
    case Kind::kType: return TypeName::kType;
    case Kind::kError: break;
  }
  return TypeName::kNull;
}

namespace {

Order Sign(auto a, auto b) { return a < b ? Order::kLess : (b < a ? Order::kGreater : Order::kEqual); }

// Integers against doubles compare as doubles, as the reference implementations do (the
// conformance suite pins it: 9223372036854775807 < 9223372036854775808.0 is false).
Order CompareIntDouble(int64_t i, double d) {
  if (std::isnan(d)) return Order::kUnordered;
  return Sign(double(i), d);
}

Order CompareUintDouble(uint64_t u, double d) {
  if (std::isnan(d)) return Order::kUnordered;
  return Sign(double(u), d);
}

Order CompareIntUint(int64_t i, uint64_t u) {
  if (i < 0) return Order::kLess;
  return Sign(uint64_t(i), u);
}

Order Flip(Order o) {
  if (o == Order::kLess) return Order::kGreater;
  if (o == Order::kGreater) return Order::kLess;
  return o;
}

std::optional<Order> CompareNumbers(const Value& a, const Value& b) {
  Kind ka = a.kind(), kb = b.kind();
  if (ka == Kind::kInt) {
    if (kb == Kind::kInt) return Sign(a.int_value(), b.int_value());
    if (kb == Kind::kUint) return CompareIntUint(a.int_value(), b.uint_value());
    if (kb == Kind::kDouble) return CompareIntDouble(a.int_value(), b.double_value());
  } else if (ka == Kind::kUint) {
    if (kb == Kind::kInt) return Flip(CompareIntUint(b.int_value(), a.uint_value()));
    if (kb == Kind::kUint) return Sign(a.uint_value(), b.uint_value());
    if (kb == Kind::kDouble) return CompareUintDouble(a.uint_value(), b.double_value());
  } else if (ka == Kind::kDouble) {
    double d = a.double_value();
    if (kb == Kind::kInt) return Flip(CompareIntDouble(b.int_value(), d));
    if (kb == Kind::kUint) return Flip(CompareUintDouble(b.uint_value(), d));
    if (kb == Kind::kDouble) {
      double e = b.double_value();
      if (std::isnan(d) || std::isnan(e)) return Order::kUnordered;
      return Sign(d, e);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Order> CompareValues(const Value& a, const Value& b) {
  if (auto numeric = CompareNumbers(a, b)) return numeric;
  if (a.kind() != b.kind()) return std::nullopt;
  switch (a.kind()) {
    case Kind::kBool: return Sign(a.bool_value(), b.bool_value());
    case Kind::kString:
    case Kind::kBytes: {
      int c = a.text().compare(b.text());  // bytewise: UTF-8 order is code point order
      return c < 0 ? Order::kLess : (c > 0 ? Order::kGreater : Order::kEqual);
    }
    case Kind::kTimestamp: {
      auto x = a.timestamp_value(), y = b.timestamp_value();
      return x.seconds != y.seconds ? Sign(x.seconds, y.seconds) : Sign(x.nanos, y.nanos);
    }
    case Kind::kDuration: {
      auto x = a.duration_value(), y = b.duration_value();
      return x.seconds != y.seconds ? Sign(x.seconds, y.seconds) : Sign(x.nanos, y.nanos);
    }
    default: return std::nullopt;
  }
}

namespace {
bool ValuesEqualAt(const Value& a, const Value& b, int depth);
}  // namespace

bool ValuesEqual(const Value& a, const Value& b) { return ValuesEqualAt(a, b, 0); }

namespace {

bool ValuesEqualAt(const Value& a, const Value& b, int depth) {
  Kind ka = a.kind();
  if (ka == Kind::kString && b.kind() == Kind::kString) return a.text() == b.text();  // the common case first
  if (auto numeric = CompareNumbers(a, b)) return *numeric == Order::kEqual;
  if (ka != b.kind()) return false;
  switch (ka) {
    case Kind::kNull: return true;
    case Kind::kBool: return a.bool_value() == b.bool_value();
    case Kind::kString:
    case Kind::kBytes: return a.text() == b.text();
    case Kind::kTimestamp: return a.timestamp_value() == b.timestamp_value();
    case Kind::kDuration: return a.duration_value() == b.duration_value();
    case Kind::kType: return a.type_value() == b.type_value();
    case Kind::kList: {
      if (a.size() != b.size() || depth >= kMaxValueNesting) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!ValuesEqualAt(a.ListAt(i), b.ListAt(i), depth + 1)) return false;
      }
      return true;
    }
    case Kind::kMap: {
      if (a.size() != b.size() || depth >= kMaxValueNesting) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        auto other = b.MapFind(a.MapKeyAt(i));
        if (!other || !ValuesEqualAt(a.MapValueAt(i), *other, depth + 1)) return false;
      }
      return true;
    }
    default: return false;
  }
}

}  // namespace

namespace {
std::string DebugStringAt(const Value& value, int depth);
}  // namespace

std::string DebugString(const Value& value) { return DebugStringAt(value, 0); }

namespace {

std::string DebugStringAt(const Value& value, int depth) {
  if (depth >= kMaxValueNesting) return "...";
  switch (value.kind()) {
    case Kind::kNull: return "null";
    case Kind::kBool: return value.bool_value() ? "true" : "false";
    case Kind::kInt: return std::to_string(value.int_value());
    case Kind::kUint: return std::to_string(value.uint_value()) + "u";
    case Kind::kDouble: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", value.double_value());
      return buf;
    }
    case Kind::kString: return "'" + std::string(value.text()) + "'";
    case Kind::kBytes: return "b'" + std::string(value.text()) + "'";
    case Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + DebugStringAt(value.ListAt(i), depth + 1);
      return out + "]";
    }
    case Kind::kMap: {
      std::string out = "{";
      for (size_t i = 0; i < value.size(); ++i) {
        out += (i ? ", " : "") + DebugStringAt(value.MapKeyAt(i), depth + 1) + ": " +
               DebugStringAt(value.MapValueAt(i), depth + 1);
      }
      return out + "}";
    }
    case Kind::kTimestamp:
      return "timestamp(" + std::to_string(value.timestamp_value().seconds) + "s+" +
             std::to_string(value.timestamp_value().nanos) + "ns)";
    case Kind::kDuration:
      return "duration(" + std::to_string(value.duration_value().seconds) + "s+" +
             std::to_string(value.duration_value().nanos) + "ns)";
    case Kind::kType: return std::string(TypeNameString(value.type_value()));
    case Kind::kError: return "error(" + value.error_message() + ")";
  }
  return "?";
}

}  // namespace

}  // namespace cairn::cel
