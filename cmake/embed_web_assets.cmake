# Writes OUT, a C++ source defining ftb::web::asset(name): each file of ASSETS (a list) as a raw string literal,
# found by its file name. Run at build time so the binary carries the page's stylesheet and scripts.
string(REPLACE "|" ";" ASSETS "${ASSETS}")
set(out "// Generated from src/web/assets/ by cmake/embed_web_assets.cmake: edit the assets, not this file.\n")
string(APPEND out "#include \"web/assets.hpp\"\n\nnamespace ftb::web {\n\nstd::string_view asset(std::string_view name) {\n")
foreach(f IN LISTS ASSETS)
  file(READ "${f}" content)
  string(FIND "${content}" ")FTBASSET\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${f} holds the raw-string delimiter )FTBASSET\"")
  endif()
  get_filename_component(name "${f}" NAME)
  string(APPEND out "    if (name == \"${name}\") return R\"FTBASSET(${content})FTBASSET\";\n")
endforeach()
string(APPEND out "    return {};\n}\n\n}  // namespace ftb::web\n")
file(WRITE "${OUT}.tmp" "${out}")
# Only touch OUT when it changed, so an unchanged asset set rebuilds nothing.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
