# tracegraph_gtest_groups(TARGET [TEST_PREFIX P] [TEST_FILTER F] [PROPERTIES NAME VALUE...]):
# the GoogleTest cases of TARGET as ctest tests, one per test suite, a suite
# of more than 20 cases split into parts of at most 20 (names like
# "Models/XnnpackParityTest" and "avx2:Models/XnnpackParityTest.2of4").
#
# Why not CMake's gtest_discover_tests, one process per case: every process
# of ours loads LibTorch, whose static initializers take 0.25 s natively and
# 0.7 s under ASan, longer than most of our cases run. At 4,000 cases that
# was a third of the test command's time (docs/design.md, "Tests").
#
# The cases are listed after each build (--gtest_list_tests, TEST_FILTER
# applied) by gtest_groups_list.cmake, which writes the ctest file and an
# index that scripts/test_counts.py reads: each part writes its cases'
# results to build/<preset>/gtest-results/, and the closing line of
# scripts/test.sh counts cases, passed, failed and skipped, not parts.
# PROPERTIES are set on every part (TIMEOUT applies to a part: one part runs
# at most 20 cases).
set(_tracegraph_gtest_groups_script ${CMAKE_CURRENT_LIST_DIR}/gtest_groups_list.cmake)
set(_tracegraph_gtest_property_names ENVIRONMENT FIXTURES_REQUIRED LABELS RESOURCE_LOCK RUN_SERIAL TIMEOUT)

function(tracegraph_gtest_groups target)
  cmake_parse_arguments(ARG "" "TEST_PREFIX;TEST_FILTER" "PROPERTIES" ${ARGN})
  # PROPERTIES arrives flattened (LABELS "zoo;isa_avx2" is two items): a known
  # property name starts a property, anything else is a value of the last one.
  set(props "")
  set(value "")
  set(name "")
  foreach(item IN LISTS ARG_PROPERTIES)
    if(item IN_LIST _tracegraph_gtest_property_names)
      if(name)
        string(APPEND props " ${name} [==[${value}]==]")
      endif()
      set(name ${item})
      set(value "")
    elseif(NOT name)
      message(FATAL_ERROR "tracegraph_gtest_groups(${target}): '${item}' is no property this function knows (${_tracegraph_gtest_property_names})")
    elseif(value STREQUAL "")
      set(value "${item}")
    else()
      string(APPEND value ";${item}")
    endif()
  endforeach()
  if(name)
    string(APPEND props " ${name} [==[${value}]==]")
  endif()

  string(MAKE_C_IDENTIFIER "${target}${ARG_TEST_PREFIX}" key)
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${key}_groups.cmake")
  set(props_file "${CMAKE_CURRENT_BINARY_DIR}/${key}_properties.txt")
  set(index_file "${CMAKE_BINARY_DIR}/gtest-groups/${key}.tsv")
  file(WRITE "${props_file}" "${props}")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND}
      -D "EXECUTABLE=$<TARGET_FILE:${target}>"
      -D "TARGET=${target}"
      -D "PREFIX=${ARG_TEST_PREFIX}"
      -D "FILTER=${ARG_TEST_FILTER}"
      -D "PROPERTIES_FILE=${props_file}"
      -D "WORKING_DIRECTORY=${CMAKE_CURRENT_BINARY_DIR}"
      -D "RESULTS_DIR=${CMAKE_BINARY_DIR}/gtest-results"
      -D "CTEST_FILE=${ctest_file}"
      -D "INDEX_FILE=${index_file}"
      -P "${_tracegraph_gtest_groups_script}"
    VERBATIM)
  # Until the first build lists the cases, ctest shows one test that says so.
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${key}_include.cmake")
  file(WRITE "${include_file}"
    "if(EXISTS \"${ctest_file}\")\n"
    "  include(\"${ctest_file}\")\n"
    "else()\n"
    "  add_test(${key}_NOT_BUILT ${key}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
