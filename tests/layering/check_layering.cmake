# Fails when a source file under src/<module>/ (sub-folders included) includes a module its
# CMake target does not link, when a folder of src/ is no module, or when core includes a
# third-party or system header that would tie it to JSON, SQLite, TOML, the network, processes
# or a terminal.
#
# cmake -DSRC=<src folder> -DTABLE=<table> -P check_layering.cmake, where the table is the one
# tests/layering/table.cmake writes from the CMake targets: `modules`, and `allowed_<module>`
# for each module (itself and the modules it links).
if(NOT SRC OR NOT TABLE)
  message(FATAL_ERROR "usage: cmake -DSRC=<src folder> -DTABLE=<table> -P check_layering.cmake")
endif()
if(NOT EXISTS ${TABLE})
  message(FATAL_ERROR "no layering table at ${TABLE}: configure the build first")
endif()
include(${TABLE})
# Third-party headers core may not include either (core stays pure logic); its tests may.
set(forbidden_core "sqlite3.h;nlohmann/;toml++/;curl/;httplib.h;sys/socket.h;unistd.h;spawn.h;iostream")

set(failures "")
file(GLOB folders LIST_DIRECTORIES true RELATIVE ${SRC} ${SRC}/*)
foreach(folder ${folders})
  list(FIND modules ${folder} known)
  if(IS_DIRECTORY ${SRC}/${folder} AND known EQUAL -1)
    list(APPEND failures "${SRC}/${folder}: no module (declare its target with arbor_module() \
or arbor_layer() in the top-level CMakeLists.txt)")
  endif()
endforeach()
foreach(mod ${modules})
  file(GLOB_RECURSE files ${SRC}/${mod}/*.h ${SRC}/${mod}/*.cc)
  foreach(f ${files})
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line ${lines})
      if(line MATCHES "#[ \t]*include[ \t]*\"([a-z_]+)/")
        set(dep ${CMAKE_MATCH_1})
        list(FIND modules ${dep} is_module)
        list(FIND allowed_${mod} ${dep} ok)
        if(is_module GREATER -1 AND ok EQUAL -1)
          list(APPEND failures "${f}: module '${mod}' may not include '${dep}/'")
        endif()
      endif()
      if(mod STREQUAL "core" AND NOT f MATCHES "_test\\.cc$")
        foreach(bad ${forbidden_core})
          string(FIND "${line}" "${bad}" pos)
          if(pos GREATER -1)
            list(APPEND failures "${f}: core may not include ${bad}")
          endif()
        endforeach()
      endif()
    endforeach()
  endforeach()
endforeach()
# One unwrapped line a violation (the self-test reads them), then the failure.
foreach(failure ${failures})
  message(NOTICE "layering violation: ${failure}")
endforeach()
list(LENGTH failures count)
if(count GREATER 0)
  message(FATAL_ERROR "${count} layering violations (above)")
endif()
message(STATUS "layering ok: ${modules}")
