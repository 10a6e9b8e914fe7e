// ziap/2048-tdl's own afterstate value (its nw4x6 network's estimate) over boards read from a file, for
// bench/bench_ntuple_vs_cpp.py. Build: g++ -O3 -march=native -std=c++17 -mbmi -mbmi2 -I ZIAP_CHECKOUT.
// Usage: ziap_value BOARDS_FILE PASSES. The weights (random, fixed) sit in huge pages, as AgentOS's do.
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/network/tuplenet.h"

using net = nw4x6;

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  FILE *file = std::fopen(argv[1], "rb");
  if (!file) return 2;
  std::vector<u64> boards;
  u64 board;
  while (std::fread(&board, sizeof board, 1, file) == 1) boards.push_back(board);
  std::fclose(file);
  float *weights = net::get_weights();
  madvise((void *)((u64)weights & ~4095ull), net::weight_len * sizeof(float), MADV_HUGEPAGE);
  u64 state = 12345;
  for (u64 i = 0; i < net::weight_len; i++) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    weights[i] = float(state % 1000) / 1000.0f;
  }
  for (int pass = 0; pass < std::atoi(argv[2]); pass++) {
    auto start = std::chrono::steady_clock::now();
    float total = 0;
    for (u64 b : boards) total += net::estimate(b);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%.2f ns/board (total %g)\n", seconds / boards.size() * 1e9, total);
  }
}
