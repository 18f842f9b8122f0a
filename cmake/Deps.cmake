# Every dependency is a Debian 12 package found through find_package / pkg-config.
# Nothing is downloaded at configure, build or run time.
find_package(Threads REQUIRED)
find_package(tomlplusplus REQUIRED)        # libtomlplusplus-dev
find_package(nlohmann_json 3.10 REQUIRED)  # nlohmann-json3-dev
find_package(CLI11 REQUIRED)               # libcli11-dev
find_package(SQLite3 REQUIRED)             # libsqlite3-dev
if(ARBOR_BUILD_TESTS)
  find_package(GTest REQUIRED)             # libgtest-dev, libgmock-dev
endif()
if(ARBOR_BUILD_BENCH)
  find_package(benchmark REQUIRED)         # libbenchmark-dev
endif()
