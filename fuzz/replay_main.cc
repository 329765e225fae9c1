// Runs every file of the given corpus directories (or the given files) through a fuzz
// target once, for builds without libFuzzer: the corpora stay regression tests on every
// compiler. Exits non-zero when an input is unreadable (a failing invariant aborts).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void collect(const std::string& path, std::vector<std::string>* out) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    out->push_back(path);  // reported as unreadable below
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    out->push_back(path);
    return;
  }
  DIR* dir = opendir(path.c_str());
  if (!dir) {
    out->push_back(path);
    return;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(dir))
    if (e->d_name[0] != '.') names.push_back(path + "/" + e->d_name);
  closedir(dir);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) collect(n, out);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) collect(argv[i], &inputs);
  int bad = 0;
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      ++bad;
      continue;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", inputs.size() - static_cast<size_t>(bad));
  return bad == 0 && !inputs.empty() ? 0 : 1;
}
