# layoutcheck_add_plugin_fuzzer(NAME LIB)
#
# A fuzzer that differentially fuzzes the plugin library target LIB against
# the reference, over every layout the plugin claims. With clang it links
# libFuzzer (add -fsanitize=fuzzer through LAYOUTCHECK_PLUGIN_FUZZER_LIBFUZZER,
# ON by default under clang); otherwise it replays files given on the command
# line. The plugin's path is compiled in; LAYOUTCHECK_PLUGIN overrides it.
if(NOT DEFINED LAYOUTCHECK_FUZZ_SOURCE_DIR)
  set(LAYOUTCHECK_FUZZ_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../fuzz")
endif()
function(layoutcheck_add_plugin_fuzzer name lib)
  add_executable(${name} ${LAYOUTCHECK_FUZZ_SOURCE_DIR}/plugin_fuzzer.cc)
  target_link_libraries(${name} PRIVATE layoutcheck::builtin)
  target_include_directories(${name} PRIVATE ${LAYOUTCHECK_FUZZ_SOURCE_DIR})
  target_compile_features(${name} PRIVATE cxx_std_17)
  target_compile_definitions(${name} PRIVATE LAYOUTCHECK_PLUGIN_PATH="$<TARGET_FILE:${lib}>")
  add_dependencies(${name} ${lib})
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND NOT LAYOUTCHECK_PLUGIN_FUZZER_REPLAY_ONLY)
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  else()
    target_sources(${name} PRIVATE ${LAYOUTCHECK_FUZZ_SOURCE_DIR}/standalone_main.cc)
  endif()
endfunction()
