# Sanitizer builds (CMakePresets.json: asan, tsan). The presets set the -fsanitize flags; this
# links cmake/sanitizer_defaults.cc into every executable of the build, so every process the
# tests start (the tests themselves, `arbor`, arbor_fake_openai, arbor_landscape_target, also
# when `arbor` runs them with a scrubbed environment) writes its reports to the same folder and
# exits with status 86. Call once, at the end of the top-level CMakeLists.txt.
option(ARBOR_SANITIZE "Sanitizer build: runtime defaults linked into every executable" OFF)
if(ARBOR_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ 12 with -fsanitize at -O1 reports false -Wmaybe-uninitialized positives inside
  # libstdc++'s <regex> (std::function moved in _NFA::_M_insert_*). The plain build, where the
  # warning is an error, still checks Arbor's own code.
  add_compile_options(-Wno-maybe-uninitialized)
endif()

# Every target of `dir` and of its subdirectories.
function(arbor_all_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    arbor_all_targets(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(arbor_link_sanitizer_defaults)
  if(NOT ARBOR_SANITIZE)
    return()
  endif()
  set(log_dir ${PROJECT_BINARY_DIR}/sanitizer-reports)
  file(MAKE_DIRECTORY ${log_dir})
  add_library(arbor_sanitizer_defaults OBJECT ${PROJECT_SOURCE_DIR}/cmake/sanitizer_defaults.cc)
  target_compile_definitions(arbor_sanitizer_defaults PRIVATE
                             ARBOR_SANITIZER_LOG_DIR="${log_dir}"
                             ARBOR_SANITIZER_SUPP_DIR="${PROJECT_SOURCE_DIR}/tests/sanitizers")
  arbor_all_targets(${PROJECT_SOURCE_DIR} targets)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_link_libraries(${t} PRIVATE arbor_sanitizer_defaults)
    endif()
  endforeach()
endfunction()
