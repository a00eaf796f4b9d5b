// simdjson loaded when a trace is first parsed, not when ftbound starts (docs/performance.md, "Process start").
//
// Everything ftbound uses of simdjson is inline in simdjson.h except one function, get_active_implementation(),
// which hands out the runtime-dispatched parser kernels (haswell, icelake, westmere, fallback) of libsimdjson.so,
// and the table of error messages.
// Linked, that library makes every command map and relocate libstdc++.so as well (Debian ships simdjson only as a
// shared library), which keeps the binary from linking libstdc++ statically. Defined here, the function opens the
// library on first use and forwards to its own: only `diagnose` (and what reads traces) pays for it. The kernels
// allocate and free their buffers inside the library, so no object crosses between its libstdc++ and the binary's.
#include "trace/simdjson_runtime.hpp"

#include <dlfcn.h>
#include <simdjson.h>

#include <cstdlib>
#include <string>

#include "ftbound/error.hpp"

#ifndef FTBOUND_SIMDJSON_SONAME
#error "FTBOUND_SIMDJSON_SONAME (the simdjson library's soname) is set by CMakeLists.txt"
#endif

namespace {

using ActiveImplementation = simdjson::internal::atomic_ptr<const simdjson::implementation>& (*)();

// The Itanium-mangled names of simdjson::get_active_implementation() and simdjson::internal::error_codes.
constexpr const char* kActiveImplementationSymbol = "_ZN8simdjson25get_active_implementationEv";
constexpr const char* kErrorCodesSymbol = "_ZN8simdjson8internal11error_codesE";

// The library's function, or why it could not be had (one of the two is set, once).
struct Loaded {
    ActiveImplementation function = nullptr;
    const simdjson::internal::error_code_info* error_codes = nullptr;
    std::string failure;
};

Loaded load_library() {
    Loaded out;
    void* lib = dlopen(FTBOUND_SIMDJSON_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* why = dlerror();
        out.failure = std::string("reading traces needs simdjson's library (Debian: libsimdjson14), which could not be "
                                  "loaded: ") +
                      (why ? why : "unknown reason");
        return out;
    }
    out.function = reinterpret_cast<ActiveImplementation>(dlsym(lib, kActiveImplementationSymbol));
    out.error_codes = static_cast<const simdjson::internal::error_code_info*>(dlsym(lib, kErrorCodesSymbol));
    if (!out.function || !out.error_codes) {
        out.function = nullptr;
        out.failure = "this simdjson library lacks get_active_implementation() or its error table: not the release "
                      "ftbound was built against";
    }
    return out;
}

const Loaded& loaded() {
    static const Loaded library = load_library();
    return library;
}

}  // namespace

namespace ftb {

void require_simdjson() {
    if (!loaded().function) throw InputError(FTBOUND_SIMDJSON_SONAME, "", loaded().failure);
}

std::string simdjson_error_text(simdjson::error_code error) {
    const int code = static_cast<int>(error);
    if (!loaded().error_codes || code < 0 || code >= static_cast<int>(simdjson::NUM_ERROR_CODES))
        return "simdjson error " + std::to_string(code);
    return loaded().error_codes[code].message;
}

}  // namespace ftb

namespace simdjson {

// Reached only from simdjson's noexcept parser set-up, after require_simdjson() has succeeded; a reader that skipped
// it and found no library would have nothing to parse with.
internal::atomic_ptr<const implementation>& get_active_implementation() {
    if (!loaded().function) std::abort();
    return loaded().function();
}

}  // namespace simdjson
