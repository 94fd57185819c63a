# oneDNN is an optional peer: the external oracle of the MegEngine layouts
# (tests/differential/mge_onednn_test.cc) and a benchmark row (bench/mge_bench.cc).
# Without it the build still succeeds; the oracle tests report SKIPPED and the
# benchmark says the peer is missing, both with the reason found here.
#
# Debian's libdnnl-dev is built with the OpenCL GPU runtime: its CMake config
# calls find_package(OpenCL REQUIRED), which is a hard configure error when
# ocl-icd-opencl-dev (only a recommendation of libdnnl-dev) is absent. OpenCL
# is therefore looked for first, and oneDNN only when it is there.
#
#   layoutcheck_find_onednn()  ->  LAYOUTCHECK_DNNL_FOUND, LAYOUTCHECK_DNNL_MISSING (the reason)
#   layoutcheck_link_onednn(TARGET)  links DNNL::dnnl or defines LAYOUTCHECK_DNNL_MISSING="reason"
function(layoutcheck_find_onednn)
  find_file(LAYOUTCHECK_DNNL_CONFIG NAMES dnnl-config.cmake dnnlConfig.cmake
            PATH_SUFFIXES lib/cmake/dnnl lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/dnnl)
  set(found OFF)
  if(NOT LAYOUTCHECK_DNNL_CONFIG)
    set(reason "oneDNN was not found at configure time (Debian package libdnnl-dev, which scripts/deps.sh installs)")
  else()
    find_package(OpenCL QUIET)
    if(NOT OpenCL_FOUND)
      set(reason "oneDNN's CMake config needs OpenCL, which was not found at configure time (Debian package ocl-icd-opencl-dev, which scripts/deps.sh installs)")
    else()
      find_package(dnnl CONFIG QUIET)
      if(dnnl_FOUND AND TARGET DNNL::dnnl)
        set(found ON)
        set(reason "")
      else()
        set(reason "find_package(dnnl) failed at configure time although ${LAYOUTCHECK_DNNL_CONFIG} exists")
      endif()
    endif()
  endif()
  if(found)
    message(STATUS "layoutcheck: oneDNN found: the MegEngine external oracle and benchmark peer are on")
  else()
    message(STATUS "layoutcheck: ${reason}; the oneDNN oracle tests will be skipped and the benchmark peer is off")
  endif()
  set(LAYOUTCHECK_DNNL_FOUND ${found} PARENT_SCOPE)
  set(LAYOUTCHECK_DNNL_MISSING "${reason}" PARENT_SCOPE)
endfunction()

# The reason becomes a string literal: no list separators or quotes in it.
function(layoutcheck_link_onednn target)
  if(LAYOUTCHECK_DNNL_FOUND)
    target_link_libraries(${target} PRIVATE DNNL::dnnl)
    target_compile_definitions(${target} PRIVATE LAYOUTCHECK_HAVE_DNNL=1)
  else()
    string(REPLACE ";" "," reason "${LAYOUTCHECK_DNNL_MISSING}")
    string(REPLACE "\"" "'" reason "${reason}")
    target_compile_definitions(${target} PRIVATE "LAYOUTCHECK_DNNL_MISSING=\"${reason}\"")
  endif()
endfunction()
