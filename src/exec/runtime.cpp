#include "exec/runtime.h"

namespace cairn::exec {

Runtime::Runtime(RuntimeOptions options)
    : pool_(options.workers), waiting_pool_(options.waiting_workers, options.waiting_workers_max) {}

Runtime::~Runtime() { Stop(); }

void Runtime::Stop() {
  watchdog_.Stop();
  pool_.Stop();
  waiting_pool_.Stop();
}

}  // namespace cairn::exec
