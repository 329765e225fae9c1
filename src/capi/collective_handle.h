// The collective handle of dinput.h, shared by the functions that make one (in process in
// api_distribute.cc, from a cluster in api_collective.cc) and those that use one.
#pragma once

#include <memory>

#include "collective/collective.h"
#include "dinput.h"

struct dinput_collective {
  std::shared_ptr<dinput::Collective> collective;
};
