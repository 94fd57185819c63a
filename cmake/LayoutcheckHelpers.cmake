# Warnings, sanitizers and the library helper shared by every target.

set(LAYOUTCHECK_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
if(LAYOUTCHECK_WERROR)
  list(APPEND LAYOUTCHECK_WARNINGS -Werror)
endif()

if(LAYOUTCHECK_SANITIZE)
  add_compile_options(-fsanitize=${LAYOUTCHECK_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${LAYOUTCHECK_SANITIZE})
endif()

# layoutcheck_library(NAME SOURCES... [DEPS ...]) -> target layoutcheck_NAME, alias layoutcheck::NAME
function(layoutcheck_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(layoutcheck_${name} STATIC ${ARG_SOURCES})
  add_library(layoutcheck::${name} ALIAS layoutcheck_${name})
  target_include_directories(layoutcheck_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:include>)
  target_compile_options(layoutcheck_${name} PRIVATE ${LAYOUTCHECK_WARNINGS})
  if(LAYOUTCHECK_BUILD_FUZZERS)
    # Coverage feedback from the libraries, not only from the harnesses.
    target_compile_options(layoutcheck_${name} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  if(ARG_DEPS)
    target_link_libraries(layoutcheck_${name} PUBLIC ${ARG_DEPS})
  endif()
endfunction()
