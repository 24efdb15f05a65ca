// Stopping single-document work (StopPoll): the core asks the caller's callback often enough that
// a cancel takes effect within a fraction of a millisecond, stops by throwing Stopped when it is
// told to, and computes exactly the same values when it is not.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/feature_hash.h"
#include "core/minhash.h"
#include "core/simhash.h"
#include "core/stop_poll.h"

using simhash::ShingleOptions;
using simhash::ShingleUnit;
using simhash::StopPoll;
using simhash::Stopped;

namespace {

// A callback that says "stop" from its stop_at-th call on (never when stop_at is 0).
struct StopAfter {
    uint64_t stop_at = 0;
    uint64_t calls = 0;
    static bool callback(void *context) {
        auto *self = static_cast<StopAfter *>(context);
        ++self->calls;
        return self->stop_at != 0 && self->calls >= self->stop_at;
    }
};

std::string lorem(size_t copies) {
    std::string text;
    for (size_t i = 0; i < copies; ++i) text += "lorem ipsum dolor sit amet, ";
    return text;
}

// Mixed scripts and multi-byte code points, so stretches end inside code points and tokens.
std::string mixed(size_t copies) {
    std::string text;
    for (size_t i = 0; i < copies; ++i)
        text += "Cr\xC3\xA8me br\xC3\xBBl\xC3\xA9" "e " + std::to_string(i) +
                " \xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C \xF0\xA0\x80\x80 ";
    return text;
}

}  // namespace

TEST(StopPoll, PollsOnceEveryIntervalOfUnits) {
    StopAfter never;
    StopPoll poll(StopAfter::callback, &never);
    poll.tick(StopPoll::kUnitsBetweenPolls - 1);
    EXPECT_EQ(never.calls, 0u);
    poll.tick(1);
    EXPECT_EQ(never.calls, 1u);
    for (int i = 0; i < 10; ++i) poll.tick(StopPoll::kUnitsBetweenPolls);
    EXPECT_EQ(never.calls, 11u);
    EXPECT_EQ(poll.polls(), 11u);
    // One large tick polls once, at once.
    poll.tick(100 * StopPoll::kUnitsBetweenPolls);
    EXPECT_EQ(never.calls, 12u);
}

TEST(StopPoll, ThrowsStoppedWhenTheCallbackSaysSo) {
    StopAfter third{3};
    StopPoll poll(StopAfter::callback, &third);
    poll.tick(StopPoll::kUnitsBetweenPolls);
    poll.tick(StopPoll::kUnitsBetweenPolls);
    EXPECT_THROW(poll.tick(StopPoll::kUnitsBetweenPolls), Stopped);
    // Without a callback it never stops.
    StopPoll none;
    for (int i = 0; i < 4; ++i) none.tick(StopPoll::kUnitsBetweenPolls);
    EXPECT_EQ(none.polls(), 4u);
}

TEST(StopPoll, SimhashTextIsPolledByInputBytesAndStops) {
    for (ShingleOptions options : {ShingleOptions{}, ShingleOptions{ShingleUnit::kChar, 64}}) {
        SCOPED_TRACE(options.size);
        const std::string text = lorem(200000);  // 5.6 MB
        StopAfter never;
        StopPoll poll(StopAfter::callback, &never);
        EXPECT_EQ(simhash::simhash_text(text.data(), text.size(), options, &poll),
                  simhash::simhash_text(text.data(), text.size(), options));
        // At least one poll per kUnitsBetweenPolls input bytes (one unit per byte).
        EXPECT_GE(never.calls, text.size() / StopPoll::kUnitsBetweenPolls);

        StopAfter second{2};
        StopPoll stopping(StopAfter::callback, &second);
        EXPECT_THROW(simhash::simhash_text(text.data(), text.size(), options, &stopping), Stopped);
        EXPECT_EQ(second.calls, 2u);
    }
}

TEST(StopPoll, OneHugeTokenIsPolledToo) {
    // No shingle ends before the end of the text: the poll still runs as the token is read.
    const std::string word(8u << 20, 'a');
    StopAfter never;
    StopPoll poll(StopAfter::callback, &never);
    EXPECT_EQ(simhash::simhash_text(word.data(), word.size(), {}, &poll),
              simhash::feature_hash(word.data(), word.size()));
    EXPECT_GE(never.calls, word.size() / StopPoll::kUnitsBetweenPolls);
    StopAfter first{1};
    StopPoll stopping(StopAfter::callback, &first);
    EXPECT_THROW(simhash::simhash_text(word.data(), word.size(), {}, &stopping), Stopped);
}

TEST(StopPoll, MinhashCountsSlotUpdates) {
    // 8192 slots: one unit per slot updated, so even a short text is polled often.
    const std::string text = lorem(2000);  // 56 KB, under one stretch of input
    simhash::MinhashFamily family(simhash::kMaxMinhashSlots, 7);
    size_t shingles = 0;
    simhash::for_each_shingle(text.data(), text.size(), ShingleOptions{},
                              [&](const char *, size_t) { ++shingles; });
    StopAfter never;
    StopPoll poll(StopAfter::callback, &never);
    EXPECT_EQ(simhash::minhash_text(text.data(), text.size(), family, {}, &poll),
              simhash::minhash_text(text.data(), text.size(), family));
    EXPECT_GE(never.calls, shingles * family.slots() / StopPoll::kUnitsBetweenPolls);

    StopAfter first{1};
    StopPoll stopping(StopAfter::callback, &first);
    EXPECT_THROW(simhash::minhash_text(text.data(), text.size(), family, {}, &stopping), Stopped);
}

TEST(StopPoll, MinhashOfHashesStops) {
    std::vector<uint64_t> hashes(100000);
    for (size_t i = 0; i < hashes.size(); ++i) hashes[i] = simhash::feature_hash(&i, sizeof i);
    simhash::MinhashFamily family(1024, 0);
    simhash::MinhashSketch plain(family), polled(family), stopped(family);
    for (uint64_t h : hashes) plain.add(h);
    StopAfter never;
    StopPoll poll(StopAfter::callback, &never);
    polled.add_all(hashes.data(), hashes.size(), &poll);
    EXPECT_EQ(polled.signature(), plain.signature());
    EXPECT_GE(never.calls, hashes.size() * 1024 / StopPoll::kUnitsBetweenPolls);
    StopAfter first{1};
    StopPoll stopping(StopAfter::callback, &first);
    EXPECT_THROW(stopped.add_all(hashes.data(), hashes.size(), &stopping), Stopped);
}

TEST(StopPoll, ShinglesAreTheSameWithAPollThatNeverStops) {
    const std::string text = mixed(30000);  // ~1.3 MB, many stretches
    for (ShingleUnit unit : {ShingleUnit::kWord, ShingleUnit::kChar})
        for (int size : {1, 3, 64}) {
            std::vector<std::string> plain, polled;
            const ShingleOptions options{unit, size};
            simhash::for_each_shingle(text.data(), text.size(), options,
                                      [&](const char *d, size_t n) { plain.emplace_back(d, n); });
            StopPoll poll;
            simhash::for_each_shingle(
                text.data(), text.size(), options,
                [&](const char *d, size_t n) { polled.emplace_back(d, n); }, &poll);
            EXPECT_EQ(polled, plain) << "size " << size;
        }
}
