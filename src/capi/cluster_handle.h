// The cluster handle of dinput.h, shared by the functions that read one (api_cluster.cc) and
// those that build on one (a collective made from a cluster).
#pragma once

#include "cluster/cluster.h"
#include "dinput.h"

struct dinput_cluster {
  dinput::ClusterSpec spec;
};
