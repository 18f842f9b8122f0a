#!/bin/sh
# Profile-guided optimisation, the first of its two steps (the campaign's compiler.pgo action).
# Builds an instrumented tinyserve with the current $CXXFLAGS, serves the workload once with the
# current TS_* knobs (the training run), and stores the profile in pgo/. The ordinary build then
# finds pgo/*.gcda and compiles with -fprofile-use (CMakeLists.txt): that is the second step.
# The profile is committed with the change, so later builds of this state reuse it.
set -eu
rm -rf build-pgo pgo
cmake -S . -B build-pgo -DCMAKE_CXX_FLAGS="${CXXFLAGS:-}" -DTS_PGO_GENERATE=ON >/dev/null
cmake --build build-pgo -j2 >/dev/null
./build-pgo/tinyserve --bench --min-time 0 >/dev/null
mkdir -p pgo
cp build-pgo/pgo-data/*.gcda pgo/
rm -rf build-pgo
echo "pgo: $(ls pgo | wc -l) profile files for CXXFLAGS='${CXXFLAGS:-}'"
