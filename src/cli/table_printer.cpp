#include "cli/table_printer.h"

#include <algorithm>

namespace cairn::cli {

namespace {

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (char ch : text) {
    if (!IsContinuation(static_cast<unsigned char>(ch))) ++width;
  }
  return width;
}

std::string FitCell(std::string_view text, size_t max_width) {
  std::string clean;
  clean.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    clean.push_back(c < 0x20 || c == 0x7F ? ' ' : ch);
  }
  if (max_width == 0 || DisplayWidth(clean) <= max_width) return clean;

  // Keep max_width - 1 code points, never splitting a multi-byte sequence, then the ellipsis.
  size_t kept = 0;
  size_t cut = 0;
  for (; cut < clean.size(); ++cut) {
    if (!IsContinuation(static_cast<unsigned char>(clean[cut]))) {
      if (kept == max_width - 1) break;
      ++kept;
    }
  }
  clean.resize(cut);
  while (!clean.empty() && clean.back() == ' ') clean.pop_back();
  return clean + "\u2026";
}

void TablePrinter::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    cells[i] = FitCell(cells[i], columns_[i].max_width == 1 ? 2 : columns_[i].max_width);
  }
  rows_.push_back(std::move(cells));
}

std::string TablePrinter::Render() const {
  std::vector<size_t> widths(columns_.size(), 0);
  for (size_t i = 0; i < columns_.size(); ++i) widths[i] = DisplayWidth(columns_[i].header);
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }

  std::string out;
  auto append_line = [&](const auto& cell_at) {
    std::string line;
    for (size_t i = 0; i < columns_.size(); ++i) {
      const std::string& cell = cell_at(i);
      const size_t pad = widths[i] - DisplayWidth(cell);
      if (i > 0) line += "  ";
      if (columns_[i].align_right) line.append(pad, ' ');
      line += cell;
      if (!columns_[i].align_right) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  append_line([&](size_t i) -> const std::string& { return columns_[i].header; });
  for (const auto& row : rows_) {
    append_line([&](size_t i) -> const std::string& { return row[i]; });
  }
  return out;
}

}  // namespace cairn::cli
