# Runs one libFuzzer fuzzer for the fuzz-smoke tests and prints its speed:
#   cmake -DFUZZER=path -DARGS="-max_total_time=20;..." -P fuzz_smoke.cmake
# The last line of the output is "NAME: N exec/s (R runs)", from libFuzzer's
# -print_final_stats=1. The speed is reported, never asserted; the test fails
# only when the fuzzer does (a finding, a leak, a timeout).
execute_process(COMMAND ${FUZZER} -print_final_stats=1 ${ARGS}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
get_filename_component(name ${FUZZER} NAME)
string(REGEX MATCH "stat::average_exec_per_sec: *([0-9]+)" _ "${err}${out}")
set(rate "${CMAKE_MATCH_1}")
string(REGEX MATCH "stat::number_of_executed_units: *([0-9]+)" _ "${err}${out}")
set(runs "${CMAKE_MATCH_1}")
if(NOT rc EQUAL 0)
  message("${out}${err}")
  message(FATAL_ERROR "${name} exited with ${rc}")
endif()
if(rate STREQUAL "")
  message("${out}${err}")
  message(FATAL_ERROR "${name}: no final stats in the output")
endif()
message("${name}: ${rate} exec/s (${runs} runs)")
