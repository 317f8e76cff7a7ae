# Included by the top CMakeLists.txt when CAIRN_FUZZ is ON: the compiler flags of a fuzz build and
# the Boost libraries it compiles itself. The targets are in tests/fuzz/CMakeLists.txt.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "CAIRN_FUZZ needs clang for libFuzzer: configure with -DCMAKE_CXX_COMPILER=clang++")
endif()
if(CAIRN_BUILD_TESTS OR CAIRN_SANITIZE OR CAIRN_BUILD_BENCH)
  message(FATAL_ERROR "CAIRN_FUZZ is a build dir of its own: configure it with -DCAIRN_BUILD_TESTS=OFF")
endif()

# Every library gets coverage hooks and the sanitizers; only the targets link libFuzzer's main
# (CAIRN_FUZZ_LINK_OPTIONS). Any UB report is fatal so that libFuzzer records it as a crash. -O1
# with frame pointers: fast enough, and stacks still name the frames.
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
                    -O1 -g)
set(CAIRN_FUZZ_LINK_OPTIONS -fsanitize=fuzzer,address,undefined)
# Boost's assertions go through tests/fuzz/boost_assert_handler.cpp (linked into every target).
add_compile_definitions(BOOST_ENABLE_ASSERT_HANDLER)

# Boost.JSON and Boost.URL parse what clients send. Debian's shared libraries carry no coverage,
# so the fuzzer would be blind inside the parsers: compile both from their sources (each ships a
# src.hpp for that) and let Boost::json / Boost::url name those instead.
find_package(Boost 1.81.0 EXACT REQUIRED CONFIG)
add_library(cairn_fuzz_boost STATIC ${CMAKE_CURRENT_LIST_DIR}/boost_json_src.cpp ${CMAKE_CURRENT_LIST_DIR}/boost_url_src.cpp)
target_link_libraries(cairn_fuzz_boost PUBLIC Boost::headers)
add_library(Boost::json INTERFACE IMPORTED GLOBAL)
target_link_libraries(Boost::json INTERFACE cairn_fuzz_boost)
add_library(Boost::url INTERFACE IMPORTED GLOBAL)
target_link_libraries(Boost::url INTERFACE cairn_fuzz_boost)
