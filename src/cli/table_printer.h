// TablePrinter: plain-text tables for terminals (`cairn list`).
//
// Columns are separated by two spaces and padded to the widest cell; a column may cap its width,
// in which case longer cells are cut and end in "…". Widths count UTF-8 code points, so accented
// titles line up (East Asian wide characters still count as one column; good enough for a list).
// Control characters in cells (newlines, tabs, escape sequences) become spaces: a title must not
// break the table or drive the terminal. Lines carry no trailing spaces.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::cli {

struct TableColumn {
  std::string header;
  size_t max_width = 0;        // 0 = unlimited; otherwise at least 2
  bool align_right = false;    // numbers
};

class TablePrinter {
 public:
  explicit TablePrinter(std::vector<TableColumn> columns) : columns_(std::move(columns)) {}

  // Adds one row; missing trailing cells are empty, extra cells are ignored.
  void AddRow(std::vector<std::string> cells);
  size_t row_count() const { return rows_.size(); }

  // The header line and every row, each ending in '\n'.
  std::string Render() const;

 private:
  std::vector<TableColumn> columns_;
  std::vector<std::vector<std::string>> rows_;  // already sanitised and truncated
};

// Number of UTF-8 code points in `text` (bytes that are not continuation bytes).
size_t DisplayWidth(std::string_view text);

// `text` with control characters replaced by spaces, cut to at most `max_width` code points
// (the last one being "…" when cut). max_width 0 means no limit.
std::string FitCell(std::string_view text, size_t max_width);

}  // namespace cairn::cli
