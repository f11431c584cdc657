// Whether the machine's first two CPUs are two cores right now: bench/run.mjs
// runs this around every two-thread measurement. On this machine kind (a VM
// with 2 vCPUs) the host sometimes runs both vCPUs on one physical core, or
// beside a busy neighbour: then two threads of multiply-adds each run at half
// speed (58.6 against 115 GFLOP/s on 2026-12-03), and no program's two
// threads can be 1.8x its one.
//
// Prints one line of JSON: multiply-add throughput (GFLOP/s) of one thread
// alone on CPU 0 and on CPU 1, of both at once, and `pair`, the sum of both
// at once over the faster one alone: 2 for two free cores, 1 for one shared
// core, in between where something else runs on one of them.
// Build: cc -O2 -pthread bench/cores_probe.c -o cores_probe
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef float v8 __attribute__((vector_size(32)));

// Twelve independent chains of multiply-adds: throughput-bound, all in
// registers, so only the core's arithmetic units set the rate. The same body
// twice: with AVX2 and FMA where the CPU has them, and without.
#define STEP(i) a[i] = a[i] * b + c
#define SPIN_BODY                                                           \
  v8 a[12], b = {0}, c = {0};                                               \
  for (int i = 0; i < 12; ++i) a[i] = (v8){0} + 1e-3f * (float)i;           \
  b += 0.999999f;                                                           \
  c += 1e-7f;                                                               \
  long rounds = 0;                                                          \
  const double end = now() + seconds;                                       \
  while (now() < end) {                                                     \
    for (int k = 0; k < 4096; ++k) {                                        \
      STEP(0); STEP(1); STEP(2); STEP(3); STEP(4); STEP(5);                 \
      STEP(6); STEP(7); STEP(8); STEP(9); STEP(10); STEP(11);               \
    }                                                                       \
    rounds += 4096;                                                         \
  }                                                                         \
  for (int i = 0; i < 12; ++i) *sink += a[i][0];                            \
  return rounds * 12;

// Multiply-adds of 8 lanes done in `seconds`.
static long spin_plain(double seconds, float* sink) { SPIN_BODY }
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma"))) static long spin_fma(double seconds, float* sink) { SPIN_BODY }
#endif

struct job {
  int cpu;
  double seconds;
  double gflops;
  float sink;
  int pinned;  // the thread runs on `cpu` alone
};

static void* run(void* arg) {
  struct job* j = arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(j->cpu, &set);
  j->pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
  long (*spin)(double, float*) = spin_plain;
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) spin = spin_fma;
#endif
  spin(0.02, &j->sink);  // leave any lower clock of a waking core behind
  const double t0 = now();
  const long vectors = spin(j->seconds, &j->sink);
  j->gflops = vectors * 8.0 * 2 / (now() - t0) * 1e-9;
  return NULL;
}

// Runs the jobs at once, a thread each; 0 where a thread could not start or
// be pinned to its CPU (a machine with one).
static int measure(struct job* jobs, int count) {
  pthread_t threads[2];
  for (int i = 0; i < count; ++i)
    if (pthread_create(&threads[i], NULL, run, &jobs[i]) != 0) return 0;
  int pinned = 1;
  for (int i = 0; i < count; ++i) pthread_join(threads[i], NULL), pinned &= jobs[i].pinned;
  return pinned;
}

int main(void) {
  struct job alone0 = {0, 0.15, 0, 0, 0}, alone1 = {1, 0.15, 0, 0, 0}, both[2] = {{0, 0.15, 0, 0, 0}, {1, 0.15, 0, 0, 0}};
  if (!measure(&alone0, 1) || !measure(&alone1, 1) || !measure(both, 2)) {
    fprintf(stderr, "cores_probe: could not run a thread on each of CPUs 0 and 1\n");
    return 1;
  }
  const double best = alone0.gflops > alone1.gflops ? alone0.gflops : alone1.gflops;
  const double pair = (both[0].gflops + both[1].gflops) / best;
  printf("{\"alone\":[%.1f,%.1f],\"both\":[%.1f,%.1f],\"pair\":%.2f,\"sink\":%g}\n", alone0.gflops, alone1.gflops, both[0].gflops,
         both[1].gflops, pair, (double)(alone0.sink + alone1.sink + both[0].sink + both[1].sink));
  return 0;
}
