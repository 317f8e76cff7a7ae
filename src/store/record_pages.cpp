#include "store/record_pages.h"

namespace cairn::store {

Status ForEachRecord(Store& store, const std::string& owner_id, model::BreadcrumbQuery query,
                     const std::function<void(const model::Breadcrumb&)>& visit) {
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(Page page, store.List(owner_id, query));
    for (const auto& crumb : page.items) visit(crumb);
    if (!page.next_cursor) return Status::Ok();
    query.cursor = std::move(page.next_cursor);
  }
}

}  // namespace cairn::store
