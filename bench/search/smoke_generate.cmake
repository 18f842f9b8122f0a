# The generated-landscape mode in CI (ctest search_bench_generate_smoke): runs arbor_search_bench
# on a few generated landscapes at budget 30 and checks the shape of what it prints and writes
# (one aggregate line per policy, the feature and acceptance sections, one CSV row per run),
# never its numbers.
# Usage: cmake -DBENCH=... -DOUT=dir -DN=3 -DPOLICIES=a,b,c -P smoke_generate.cmake
file(REMOVE_RECURSE ${OUT})  # a previous run (perhaps with another N) must not count
file(MAKE_DIRECTORY ${OUT})
execute_process(
  COMMAND ${BENCH} --generate ${N} --budgets 30 --policies ${POLICIES} --csv ${OUT}/runs.csv
          --summary ${OUT}/summary.csv --gen-out ${OUT}/landscapes
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "arbor_search_bench exited ${rc}: ${err}")
endif()
string(REPLACE "," ";" policies "${POLICIES}")
list(LENGTH policies n_policies)
file(STRINGS ${OUT}/runs.csv runs)
file(STRINGS ${OUT}/summary.csv summary)
file(GLOB written ${OUT}/landscapes/gen-*.json)
list(LENGTH runs n_runs)
list(LENGTH summary n_summary)
list(LENGTH written n_written)
math(EXPR want "${N} * ${n_policies} + 1")
if(NOT n_runs EQUAL want OR NOT n_summary EQUAL want OR NOT n_written EQUAL N)
  message(FATAL_ERROR "expected ${want} run and summary rows (headers included) and ${N} "
                      "landscape files, got ${n_runs}, ${n_summary} and ${n_written}")
endif()
foreach(section "# Generated landscapes: ${N} " "## Budget 30\n" "## Median gain by feature, budget 30"
                "## Acceptance")
  if(NOT out MATCHES "${section}")
    message(FATAL_ERROR "no section '${section}'")
  endif()
endforeach()
if(NOT out MATCHES "policy +budget +runs +gain med \\[p25,p75\\] +>=greedy +broken +inflated")
  message(FATAL_ERROR "the aggregate table's header does not name its columns")
endif()
foreach(policy ${policies})
  if(NOT out MATCHES "\n${policy} +30 +${N} ")
    message(FATAL_ERROR "no aggregate line for ${policy}")
  endif()
endforeach()
