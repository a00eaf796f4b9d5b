# The BLAS is loaded at run time (src/probe/host_bench.cpp, dlopen on first use), not linked: only `probe` uses it, and
# linking OpenBLAS costs every command its relocations and thread-pool start-up. This file finds the library
# find_package(BLAS) chose and defines, for a target:
#   FTBOUND_HAVE_BLAS=1
#   FTBOUND_BLAS_LIBRARY="<path found at build time>"     tried first
#   FTBOUND_BLAS_SONAME="<its DT_SONAME, e.g. libopenblas.so.0>"  tried next (the runtime package has no .so link)
set(FTBOUND_BLAS_LIBRARY "")
set(FTBOUND_BLAS_SONAME "")
if(BLAS_FOUND)
  foreach(lib ${BLAS_LIBRARIES})
    if(lib MATCHES "\\.so(\\.[0-9]+)*$" AND EXISTS "${lib}")
      set(FTBOUND_BLAS_LIBRARY "${lib}")
      break()
    endif()
  endforeach()
endif()
if(FTBOUND_BLAS_LIBRARY)
  get_filename_component(FTBOUND_BLAS_SONAME "${FTBOUND_BLAS_LIBRARY}" NAME)
  find_program(FTBOUND_READELF NAMES readelf ${CMAKE_READELF})
  if(FTBOUND_READELF)
    execute_process(COMMAND ${FTBOUND_READELF} -d "${FTBOUND_BLAS_LIBRARY}" OUTPUT_VARIABLE dynamic ERROR_QUIET)
    if(dynamic MATCHES "Library soname: \\[([^]]+)\\]")
      set(FTBOUND_BLAS_SONAME "${CMAKE_MATCH_1}")
    endif()
  endif()
  message(STATUS "BLAS loaded at run time: ${FTBOUND_BLAS_LIBRARY} (soname ${FTBOUND_BLAS_SONAME})")
endif()

function(ftbound_blas_definitions target scope)
  if(FTBOUND_BLAS_LIBRARY)
    target_compile_definitions(${target} ${scope} FTBOUND_HAVE_BLAS=1
      FTBOUND_BLAS_LIBRARY="${FTBOUND_BLAS_LIBRARY}" FTBOUND_BLAS_SONAME="${FTBOUND_BLAS_SONAME}")
  endif()
endfunction()
