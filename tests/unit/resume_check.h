// The save and restore round trip that the unit tests of saved states share: take k elements,
// save, restore into a new iterator and read on. Each test file passes its own `text` (how
// an element reads in its expectations).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/epoch_counters.h"
#include "data/state.h"

namespace dinput::test {

// What `it` delivers, as text, up to `limit` elements.
template <typename Text>
std::vector<std::string> drain_as(Iterator& it, Text text, size_t limit = 100000) {
  std::vector<std::string> out;
  Element e;
  while (out.size() < limit && it.next(e)) out.push_back(text(e));
  return out;
}

// Everything a new iterator of `ds` delivers, as text.
template <typename Text>
std::vector<std::string> all_as(const DatasetPtr& ds, Text text, size_t limit = 100000) {
  IteratorContext ctx;
  ctx.epochs = std::make_shared<EpochCounters>();
  auto it = ds->make_iterator(ctx);
  return drain_as(*it, text, limit);
}

// Takes k elements from a new iterator, saves, restores into another and drains it; returns
// what the two delivered together (`state` receives the saved bytes). Saving changes
// nothing: saving again gives the same bytes, and the saved iterator goes on delivering what
// the restored one does.
template <typename Text>
std::vector<std::string> resumed_as(const DatasetPtr& ds, size_t k, Text text,
                                    std::string* state = nullptr) {
  IteratorContext ctx;
  ctx.epochs = std::make_shared<EpochCounters>();
  auto it = ds->make_iterator(ctx);
  std::vector<std::string> out;
  Element e;
  bool ended = false;
  while (out.size() < k) {
    if (!it->next(e)) {
      ended = true;
      break;
    }
    out.push_back(text(e));
  }
  std::string saved = save_state(*ds, *ds, ended ? nullptr : it.get(), ended);
  if (state) *state = saved;
  EXPECT_EQ(save_state(*ds, *ds, ended ? nullptr : it.get(), ended), saved);
  std::vector<std::string> original_rest;
  if (!ended) original_rest = drain_as(*it, text);
  it.reset();
  IteratorContext fresh;
  RestoredIterator restored = restore_state(ds, fresh, saved);
  std::vector<std::string> rest;
  if (restored.iterator) rest = drain_as(*restored.iterator, text);
  EXPECT_EQ(rest, original_rest) << "saved after " << k;
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

// Every save point from before the first element to after the last.
template <typename Text>
void expect_resumes_everywhere_as(const DatasetPtr& ds, Text text) {
  std::vector<std::string> expected = all_as(ds, text);
  for (size_t k = 0; k <= expected.size() + 1; ++k)
    ASSERT_EQ(resumed_as(ds, k, text), expected) << "saved after " << k << " elements";
}

}  // namespace dinput::test
