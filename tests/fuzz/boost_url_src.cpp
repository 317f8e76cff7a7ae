// Boost.URL compiled into the fuzz build, with its instrumentation (see fuzz_build.cmake).
#include <boost/url/src.hpp>
