// StoredRow: one row of a backend's query result, read by 0-based column index, so that the
// decoding of records and events (record_rows.h) is written once for every backend.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cairn::store {

class StoredRow {
 public:
  virtual ~StoredRow() = default;

  virtual bool IsNull(int column) const = 0;
  virtual int64_t Int(int column) const = 0;
  // A boolean column: SQLite stores 0 or 1, which Int() reads; a backend with a boolean type
  // overrides this.
  virtual bool Bool(int column) const { return Int(column) != 0; }
  // The column's text, valid until the row changes; empty for NULL.
  virtual std::string_view Text(int column) const = 0;

  std::optional<std::string> OptText(int column) const {
    if (IsNull(column)) return std::nullopt;
    return std::string(Text(column));
  }
};

}  // namespace cairn::store
