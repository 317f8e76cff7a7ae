#include "exec/runtime.h"

namespace cairn::exec {

Runtime::Runtime(RuntimeOptions options)
    : pool_(0, options.workers, options.idle_exit),
      waiting_pool_(options.waiting_workers, options.waiting_workers_max, options.idle_exit) {}

Runtime::~Runtime() { Stop(); }

void Runtime::Stop() {
  watchdog_.Stop();
  pool_.Stop();
  waiting_pool_.Stop();
}

}  // namespace cairn::exec
