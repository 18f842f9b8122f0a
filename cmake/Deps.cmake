# Every dependency is a Debian 12 package found through find_package / pkg-config.
# Nothing is downloaded at configure, build or run time.
find_package(Threads REQUIRED)
find_package(tomlplusplus REQUIRED)        # libtomlplusplus-dev
find_package(nlohmann_json 3.10 REQUIRED)  # nlohmann-json3-dev
find_package(CLI11 REQUIRED)               # libcli11-dev
find_package(SQLite3 REQUIRED)             # libsqlite3-dev
find_package(CURL REQUIRED)                # libcurl4-openssl-dev
# libcpp-httplib-dev: Debian ships httplib.h with a compiled library (and OpenSSL support on),
# so it is found through its pkg-config file rather than as a header-only target.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib>=0.11)
if(ARBOR_BUILD_TESTS)
  find_package(GTest REQUIRED)             # libgtest-dev, libgmock-dev
endif()
if(ARBOR_BUILD_BENCH)
  find_package(benchmark REQUIRED)         # libbenchmark-dev
endif()
