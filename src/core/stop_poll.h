// Stopping long single-document work early: a query cancel or statement timeout in the SQL layer.
// The caller hands the core a StopPoll holding a plain callback. The core counts its work in
// units (one input byte tokenized, one MinHash slot updated: 0.3-40 ns on one core, the most for
// 64-code-point shingles) and asks the callback every kUnitsBetweenPolls units: every 0.1 ms
// (MinHash slots) to 10 ms (the longest shingles), about every millisecond for default SimHash.
// When the callback answers "stop", tick() throws Stopped: it unwinds only core frames (which
// free their memory) up to the caller, who catches it and reports the cancel. The callback must
// not unwind itself (in the SQL layer it only reads the interrupt flags).
#pragma once

#include <cstdint>

namespace simhash {

// Thrown by StopPoll::tick when the caller asked to stop. Deliberately not a std::exception, so
// that no handler for ordinary errors can mistake a cancel for one.
struct Stopped {};

class StopPoll {
public:
    using Callback = bool (*)(void *context);
    static constexpr uint64_t kUnitsBetweenPolls = uint64_t{1} << 18;

    StopPoll() = default;  // never stops
    StopPoll(Callback should_stop, void *context) : should_stop_(should_stop), context_(context) {}

    // Counts `units` of work done; polls the callback when enough work has accumulated and
    // throws Stopped if it asks to stop.
    void tick(uint64_t units) {
        if (units < until_poll_) {
            until_poll_ -= units;
            return;
        }
        until_poll_ = kUnitsBetweenPolls;
        ++polls_;
        if (should_stop_ && should_stop_(context_)) throw Stopped();
    }
    // How many times the callback was asked (for tests).
    uint64_t polls() const { return polls_; }

private:
    Callback should_stop_ = nullptr;
    void *context_ = nullptr;
    uint64_t until_poll_ = kUnitsBetweenPolls;
    uint64_t polls_ = 0;
};

// Ticks `poll` when the caller passed one (a null poll never stops the work).
inline void tick(StopPoll *poll, uint64_t units) {
    if (poll) poll->tick(units);
}

}  // namespace simhash

#include "cpp_only.h"
