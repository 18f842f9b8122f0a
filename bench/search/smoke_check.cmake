# The search benchmark's reduced run in CI (ctest search_bench_smoke): runs arbor_search_bench on
# two landscapes with every policy, one seed, budget 30, and checks that it finished without a
# failed run and wrote one CSV row per run and one summary row per landscape and policy.
# Usage: cmake -DBENCH=... -DLANDSCAPES=a.json;b.json -DOUT=dir -DPOLICIES=n -P smoke_check.cmake
file(MAKE_DIRECTORY ${OUT})
set(args)
foreach(l ${LANDSCAPES})
  list(APPEND args --landscape ${l})
endforeach()
execute_process(
  COMMAND ${BENCH} ${args} --seeds 1 --budgets 30 --csv ${OUT}/runs.csv
          --summary ${OUT}/summary.csv
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "arbor_search_bench exited ${rc}: ${err}")
endif()
if(err MATCHES "left out")
  message(FATAL_ERROR "a policy was left out: ${err}")
endif()
list(LENGTH LANDSCAPES n_landscapes)
file(STRINGS ${OUT}/runs.csv runs)
file(STRINGS ${OUT}/summary.csv summary)
list(LENGTH runs n_runs)
list(LENGTH summary n_summary)
math(EXPR want_runs "${n_landscapes} * ${POLICIES} + 1")
math(EXPR want_summary "${n_landscapes} * ${POLICIES} + 1")
if(NOT n_runs EQUAL want_runs OR NOT n_summary EQUAL want_summary)
  message(FATAL_ERROR "expected ${want_runs} run rows and ${want_summary} summary rows (headers "
                      "included), got ${n_runs} and ${n_summary}")
endif()
list(GET runs 0 header)
if(NOT header MATCHES "^landscape,policy,seed,budget,score,gain,true_value,final_broken,")
  message(FATAL_ERROR "unexpected header: ${header}")
endif()
if(NOT out MATCHES "policy +budget +score med \\[p25,p75\\] +gain med \\[p25,p75\\] +evals->90%")
  message(FATAL_ERROR "the table's header does not name its columns")
endif()
foreach(policy random arbor arbor-no-critic arbor-warm-kb greedy bandit optuna-tpe)
  if(NOT out MATCHES "\n${policy} +30 ")
    message(FATAL_ERROR "no table line for ${policy}")
  endif()
endforeach()
