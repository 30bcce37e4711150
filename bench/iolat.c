// The floor for `fsbench io`'s latency figures: a bare loop of one
// pread/pwrite per I/O with a clock read before and after each, nothing
// else, on a file it lays out itself. Ground truth for bench/io.py.
//   iolat FILE SIZE_MIB BLOCK SECONDS randread|read|write [WARMUP_SECONDS]
// I/Os in the first WARMUP_SECONDS (default 0) run but are not counted,
// like fio's ramp_time and fsbench's --warmup.
// Prints "iops N", "mib_per_s N", "p50_ns N", "p99_ns N".
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES 50000000L

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

// xorshift64*: a cheap uniform draw for random offsets.
static uint64_t draw(uint64_t *s) {
  *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
  return *s * 2685821657736338717ULL;
}

int main(int argc, char **argv) {
  if (argc != 6 && argc != 7) { fprintf(stderr, "usage: iolat FILE SIZE_MIB BLOCK SECONDS randread|read|write [WARMUP]\n"); return 2; }
  const char *path = argv[1];
  long size = atol(argv[2]) * 1048576L, block = atol(argv[3]);
  double seconds = atof(argv[4]);
  const char *mode = argv[5];
  char *buf = aligned_alloc(4096, 1 << 20);
  for (long i = 0; i < 1 << 20; i++) buf[i] = (char)rand();
  int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  if (fd < 0) { perror(path); return 1; }
  for (long off = 0; off < size; off += 1 << 20)
    if (pwrite(fd, buf, 1 << 20, off) != 1 << 20) { perror("layout"); return 1; }
  fsync(fd);
  uint32_t *lat = malloc(MAX_SAMPLES * sizeof *lat);
  long n = 0, blocks = size / block, pos = 0;
  int random = !strcmp(mode, "randread"), writing = !strcmp(mode, "write");
  double warmup = argc == 7 ? atof(argv[6]) : 0;
  uint64_t seed = 88172645463325252ULL, begun = now_ns();
  uint64_t start = begun + (uint64_t)(warmup * 1e9), end = start + (uint64_t)(seconds * 1e9);
  uint64_t t = begun;
  while (t < end && n < MAX_SAMPLES) {
    long off = random ? (long)(draw(&seed) % blocks) * block : pos * block;
    pos = (pos + 1) % blocks;
    uint64_t t0 = now_ns();
    ssize_t r = writing ? pwrite(fd, buf, block, off) : pread(fd, buf, block, off);
    t = now_ns();
    if (r != block) { perror("io"); return 1; }
    if (t0 >= start) lat[n++] = (uint32_t)(t - t0);
  }
  double elapsed = (t - start) / 1e9;
  qsort(lat, n, sizeof *lat, by_value);
  printf("iops %.0f\nmib_per_s %.1f\np50_ns %u\np99_ns %u\n", n / elapsed,
         n * (double)block / 1048576.0 / elapsed, lat[n / 2], lat[n * 99 / 100]);
  close(fd);
  unlink(path);
  return 0;
}
