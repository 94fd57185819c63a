# layoutcheck_add_plugin_fuzzer(NAME LIB)
#
# A fuzzer that differentially fuzzes the plugin library target LIB against
# the reference, over every layout the plugin claims, ready for a ClusterFuzzLite
# or OSS-Fuzz set-up of its own: name it `*_fuzzer` (e.g. mine_fuzzer) and copy
# the target file and NAME_seed_corpus.zip (built beside it from layoutcheck's
# differential corpus and kept findings) into $OUT.
#
# With clang it links libFuzzer: the engine's $LIB_FUZZING_ENGINE when that is
# set at configure time (ClusterFuzzLite, OSS-Fuzz), -fsanitize=fuzzer
# otherwise; LAYOUTCHECK_PLUGIN_FUZZER_REPLAY_ONLY or another compiler gives a
# main that replays files. The plugin's path is compiled in; the environment
# variable LAYOUTCHECK_PLUGIN overrides it at run time.
if(NOT DEFINED LAYOUTCHECK_FUZZ_SOURCE_DIR)
  set(LAYOUTCHECK_FUZZ_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../fuzz")
endif()
if(NOT DEFINED LAYOUTCHECK_CORPUS_DIR)
  set(LAYOUTCHECK_CORPUS_DIR "${CMAKE_CURRENT_LIST_DIR}/../corpus")
endif()
function(layoutcheck_add_plugin_fuzzer name lib)
  add_executable(${name} ${LAYOUTCHECK_FUZZ_SOURCE_DIR}/plugin_fuzzer.cc)
  target_link_libraries(${name} PRIVATE layoutcheck::builtin)
  target_include_directories(${name} PRIVATE ${LAYOUTCHECK_FUZZ_SOURCE_DIR})
  target_compile_features(${name} PRIVATE cxx_std_17)
  target_compile_definitions(${name} PRIVATE LAYOUTCHECK_PLUGIN_PATH="$<TARGET_FILE:${lib}>")
  add_dependencies(${name} ${lib})
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND NOT LAYOUTCHECK_PLUGIN_FUZZER_REPLAY_ONLY)
    if(DEFINED ENV{LIB_FUZZING_ENGINE} AND NOT "$ENV{LIB_FUZZING_ENGINE}" STREQUAL "")
      separate_arguments(engine UNIX_COMMAND "$ENV{LIB_FUZZING_ENGINE}")
    else()
      set(engine -fsanitize=fuzzer)
    endif()
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer-no-link)
    target_link_options(${name} PRIVATE ${engine})
  else()
    target_sources(${name} PRIVATE ${LAYOUTCHECK_FUZZ_SOURCE_DIR}/standalone_main.cc)
  endif()
  # The seed corpus: the differential fuzzer's seeds and kept findings, whose
  # inputs the plugin fuzzer reads the same way.
  set(seeds)
  foreach(dir ${LAYOUTCHECK_CORPUS_DIR}/fuzz_differential ${LAYOUTCHECK_CORPUS_DIR}/regressions/fuzz_differential)
    if(IS_DIRECTORY ${dir})
      list(APPEND seeds ${dir})
    endif()
  endforeach()
  find_program(LAYOUTCHECK_ZIP zip)
  if(seeds AND LAYOUTCHECK_ZIP)
    add_custom_command(TARGET ${name} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E rm -f $<TARGET_FILE:${name}>_seed_corpus.zip
      COMMAND ${LAYOUTCHECK_ZIP} -q -j -r $<TARGET_FILE:${name}>_seed_corpus.zip ${seeds}
      COMMENT "Seed corpus of ${name}" VERBATIM)
  endif()
endfunction()
