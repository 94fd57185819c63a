# Runs one libFuzzer fuzzer for the fuzz-smoke tests and prints its speed:
#   cmake -DFUZZER=path -DARGS="-max_total_time=20;..." -P fuzz_smoke.cmake
# The last line of the output is
#   "NAME: N exec/s, C exec per CPU-second (R runs in S s of CPU)"
# N is libFuzzer's own average (-print_final_stats=1), over wall-clock time,
# which on a shared host counts the time other processes hold the cores too;
# C divides the runs by the CPU time (user + system) the fuzzer used, from the
# shell's `times`. The speed is reported, never asserted; the test fails only
# when the fuzzer does (a finding, a leak, a timeout).
execute_process(COMMAND sh -c "\"$0\" \"$@\"; rc=$?; times; exit $rc" ${FUZZER} -print_final_stats=1 ${ARGS}
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
# `times` prints the shell's user and system time, then its children's:
# "0m9.260s 0m0.760s" (some shells print more digits, or none after the point).
set(cpu_text "")
if(out MATCHES "[0-9]+m[0-9.]+s [0-9]+m[0-9.]+s[\r\n]+([0-9]+)m([0-9]+)(\\.([0-9]*))?s ([0-9]+)m([0-9]+)(\\.([0-9]*))?s")
  set(fields "${CMAKE_MATCH_1};${CMAKE_MATCH_2};${CMAKE_MATCH_4};${CMAKE_MATCH_5};${CMAKE_MATCH_6};${CMAKE_MATCH_8}")
  set(ms 0)
  foreach(first 0 3)
    math(EXPR second "${first} + 1")
    math(EXPR third "${first} + 2")
    list(GET fields ${first} minutes)
    list(GET fields ${second} seconds)
    list(GET fields ${third} frac)
    string(SUBSTRING "${frac}000" 0 3 frac)
    string(REGEX REPLACE "^0+([0-9])" "\\1" frac "${frac}")
    math(EXPR ms "${ms} + (${minutes} * 60 + ${seconds}) * 1000 + ${frac}")
  endforeach()
  if(ms GREATER 0)
    math(EXPR per_cpu "${runs} * 1000 / ${ms}")
    math(EXPR whole "${ms} / 1000")
    math(EXPR tenths "${ms} % 1000 / 100")
    set(cpu_text ", ${per_cpu} exec per CPU-second (${runs} runs in ${whole}.${tenths} s of CPU)")
  endif()
endif()
if(cpu_text STREQUAL "")
  set(cpu_text " (${runs} runs)")
endif()
message("${name}: ${rate} exec/s${cpu_text}")
