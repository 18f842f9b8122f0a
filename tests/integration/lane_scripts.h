// Shell for the build-lane tests (parallel_test.cc, slurm_lanes_test.cc): a candidate's build
// (not the baseline's, node 1) waits, at most 60 s and only until the first meeting, for
// another candidate's build to be running; it then touches @AUX@/met. Overlap is thus shown
// without timing: the test fails only if two builds could not be running together.
#pragma once

namespace arbor::integration {

inline constexpr char kMeetAnotherBuild[] = R"(
if [ "$ARBOR_NODE" != 1 ] && [ ! -e @AUX@/met ]; then
  touch @AUX@/building-$ARBOR_NODE
  i=0
  while [ $i -lt 1200 ] && [ ! -e @AUX@/met ]; do
    for f in @AUX@/building-*; do
      [ -e "$f" ] && [ "$f" != @AUX@/building-$ARBOR_NODE ] && touch @AUX@/met
    done
    sleep 0.05; i=$((i+1))
  done
  rm -f @AUX@/building-$ARBOR_NODE
fi
)";

}  // namespace arbor::integration
