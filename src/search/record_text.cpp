#include "search/record_text.h"

#include <vector>

#include "store/search_words.h"
#include "store/text_index.h"

namespace cairn::search {
namespace json = boost::json;

std::string RecordText(const model::Breadcrumb& crumb, size_t max_bytes) {
  std::string text;
  auto add = [&](std::string_view piece) {
    if (piece.empty() || text.size() >= max_bytes) return;
    if (!text.empty()) text += '\n';
    text.append(piece.substr(0, max_bytes - std::min(max_bytes, text.size())));
  };
  add(crumb.title);
  if (crumb.description) add(*crumb.description);
  std::string tags;
  for (const auto& tag : crumb.tags) tags += (tags.empty() ? "" : " ") + tag;
  add(tags);
  // Depth first, with an explicit stack: a deep context must not deepen the C++ stack.
  std::vector<const json::value*> stack{&crumb.context};
  while (!stack.empty() && text.size() < max_bytes) {
    const json::value* v = stack.back();
    stack.pop_back();
    if (v->is_string()) {
      add(v->get_string());
    } else if (v->is_array()) {
      const json::array& items = v->get_array();
      for (auto it = items.rbegin(); it != items.rend(); ++it) stack.push_back(&*it);
    } else if (v->is_object()) {
      const json::object& members = v->get_object();
      std::vector<const json::value*> values;
      for (const auto& member : members) values.push_back(&member.value());
      for (auto it = values.rbegin(); it != values.rend(); ++it) stack.push_back(*it);
    }
  }
  return text;
}

std::string QueryWords(std::string_view text) {
  std::string out;
  for (const store::SearchWord& word : store::SplitSearchWords(text, store::kMaxSearchTerms)) {
    if (out.size() + word.text.size() + 1 > store::kMaxSearchQueryBytes) break;
    out += (out.empty() ? "" : " ") + word.text;
  }
  return out;
}

}  // namespace cairn::search
