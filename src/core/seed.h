// Seeds for shuffling: reproducible orders per (seed, epoch), and a fresh seed when the user
// asks for randomness.
#pragma once

#include <cstdint>

namespace dinput {

// splitmix64: decorrelates nearby inputs, e.g. (seed, epoch) pairs, into generator seeds.
uint64_t mix_seed(uint64_t x);

// The seed of the given epoch: a new, reproducible order for each iterator.
inline uint64_t epoch_seed(uint64_t seed, uint64_t epoch) {
  return mix_seed(seed ^ mix_seed(epoch));
}

// `seed` itself when >= 0, else a random one (the user asked for nondeterminism).
uint64_t seed_or_random(int64_t seed);

}  // namespace dinput
