# The layering check must fail on a tree with forbidden includes, so that it cannot pass
# silently (a table read as empty, a folder not scanned, a pattern that never matches).
# bad_tree/ has one file per rule, some in sub-folders, next to includes that are allowed; the
# check must exit non-zero and report exactly the forbidden ones.
#
# cmake -DCHECK=<check_layering.cmake> -DTABLE=<table> -DSRC=<bad_tree> -P self_test.cmake
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${SRC} -DTABLE=${TABLE} -P ${CHECK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(expected
    "${SRC}/core/tree/edge.h: module 'core' may not include 'app/'"
    "${SRC}/core/search/wire.cc: core may not include nlohmann/"
    "${SRC}/core/search/wire.cc: core may not include unistd.h"
    "${SRC}/util/deep/up.h: module 'util' may not include 'core/'"
    "${SRC}/stray: no module")
set(problems "")
if(rc EQUAL 0)
  list(APPEND problems "the check passed")
endif()
foreach(line ${expected})
  string(FIND "${err}" "layering violation: ${line}" at)
  if(at EQUAL -1)
    list(APPEND problems "not reported: ${line}")
  endif()
endforeach()
# Everything else in bad_tree is allowed: one report more means an allowed include was refused.
string(REGEX MATCHALL "layering violation: " reported "${err}")
list(LENGTH reported count)
list(LENGTH expected want)
if(NOT count EQUAL want)
  list(APPEND problems "${count} reports, expected ${want}")
endif()
if(problems)
  list(JOIN problems "\n" msg)
  message(FATAL_ERROR "layering self-test:\n${msg}\nthe check said:\n${out}${err}")
endif()
message(STATUS "layering self-test ok: the check reports each of the ${want} forbidden includes")
