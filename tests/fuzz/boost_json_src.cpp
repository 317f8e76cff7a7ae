// Boost.JSON compiled into the fuzz build, with its instrumentation (see fuzz_build.cmake).
#include <boost/json/src.hpp>
