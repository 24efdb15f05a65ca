// The one boundary between C++ and PostgreSQL. Every SQL-callable function of the extension is
// defined with SIMHASH_FUNCTION, which runs its body inside call_guarded() (and the parallel
// workers' entry point runs its body inside run_guarded(), the same guard):
//  - a C++ exception never reaches PostgreSQL: it is caught, its message copied into a plain
//    buffer, and the PostgreSQL error is raised only after the catch block has ended, so no
//    exception object or unwinding state is alive when ereport() longjmps;
//  - the body itself may raise PostgreSQL errors (detoasting, palloc, ereport) only while it owns
//    no C++ object with a destructor. Bodies therefore read their arguments and allocate their
//    results in C style and hand plain pointers to core functions (src/core), which own the C++
//    objects and never call PostgreSQL;
//  - long core work is stopped by a query cancel through interrupt_poll(): the core polls the
//    interrupt flags and throws simhash::Stopped, which unwinds the core's frames; the guard
//    catches it and raises the cancel with CHECK_FOR_INTERRUPTS() after the catch block.
// Include this header after all C++ and core headers: it brings in postgres.h.
#pragma once

#include <exception>
#include <new>
#include <stdexcept>

#include "core/stop_poll.h"
#include "compat.h"

namespace simhash_pg {

// A C++-side error with an explicit SQLSTATE (for glue code that validates in C++).
class SqlError : public std::runtime_error {
public:
    SqlError(int sqlstate, const char *message, const char *hint = nullptr)
        : std::runtime_error(message), sqlstate_(sqlstate), hint_(hint) {}
    int sqlstate() const { return sqlstate_; }
    const char *hint() const { return hint_; }

private:
    int sqlstate_;
    const char *hint_;  // static string or nullptr
};

void copy_message(char *buffer, size_t size, const char *message);

// A stop poll callback for the core: true when a query cancel (statement timeout,
// pg_cancel_backend) or a termination is pending and may be processed now. It only reads the
// interrupt flags, so the core may call it from any of its frames.
bool interrupt_requested(void *context);

// A StopPoll that stops core work when interrupt_requested() says so.
inline simhash::StopPoll interrupt_poll() { return simhash::StopPoll(interrupt_requested, nullptr); }

// Raises the pending interrupt (CHECK_FOR_INTERRUPTS), or query_canceled if PostgreSQL had
// nothing left to raise. Call it only once the core work that stopped has returned.
[[noreturn]] void raise_interrupt(const char *function_name);

// Runs body() (any callable) so that no C++ exception leaves it: what it throws is raised as a
// PostgreSQL error once the catch blocks have ended. `function_name` names unexpected errors.
template <typename Body>
void run_guarded(const char *function_name, Body body) {
    int sqlstate;
    char message[512];
    const char *hint = nullptr;
    bool internal = false;  // unexpected errors name the C function, user errors speak for themselves
    bool stopped = false;
    try {
        body();
        return;
    } catch (const simhash::Stopped &) {
        stopped = true;
    } catch (const SqlError &e) {
        sqlstate = e.sqlstate();
        hint = e.hint();
        copy_message(message, sizeof(message), e.what());
    } catch (const std::invalid_argument &e) {
        sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
        copy_message(message, sizeof(message), e.what());
    } catch (const std::bad_alloc &) {
        sqlstate = ERRCODE_OUT_OF_MEMORY;
        copy_message(message, sizeof(message), "out of memory");
    } catch (const std::length_error &e) {
        sqlstate = ERRCODE_PROGRAM_LIMIT_EXCEEDED;
        copy_message(message, sizeof(message), e.what());
    } catch (const std::exception &e) {
        sqlstate = ERRCODE_INTERNAL_ERROR;
        internal = true;
        copy_message(message, sizeof(message), e.what());
    } catch (...) {
        sqlstate = ERRCODE_INTERNAL_ERROR;
        internal = true;
        copy_message(message, sizeof(message), "unknown C++ exception");
    }
    // Outside the catch blocks: nothing of C++'s exception machinery is alive any more.
    if (stopped) raise_interrupt(function_name);
    if (internal)
        ereport(ERROR, (errcode(sqlstate), errmsg_internal("%s: %s", function_name, message)));
    ereport(ERROR, (errcode(sqlstate), errmsg("%s", message), hint ? errhint("%s", hint) : 0));
}

template <Datum (*Body)(FunctionCallInfo)>
Datum call_guarded(FunctionCallInfo fcinfo, const char *function_name) {
    Datum result = (Datum)0;
    run_guarded(function_name, [&] { result = Body(fcinfo); });
    return result;
}

}  // namespace simhash_pg

// Defines the SQL-callable C function `name` (with PG_FUNCTION_INFO_V1) whose body follows. The
// function and its pg_finfo_ record are the module's only exported symbols besides the magic block
// and _PG_init (PostgreSQL 15's PG_FUNCTION_INFO_V1 does not mark the function itself exported).
#define SIMHASH_FUNCTION(name)                                                  \
    static Datum name##_body(PG_FUNCTION_ARGS);                                 \
    extern "C" SIMHASH_EXPORT Datum name(PG_FUNCTION_ARGS);                     \
    extern "C" {                                                                \
    PG_FUNCTION_INFO_V1(name);                                                  \
    }                                                                           \
    extern "C" Datum name(PG_FUNCTION_ARGS) {                                   \
        return simhash_pg::call_guarded<name##_body>(fcinfo, #name);            \
    }                                                                           \
    static Datum name##_body(PG_FUNCTION_ARGS)
