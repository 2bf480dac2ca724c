/* cuda_philox_host.cu — the CUDA kernel library's Philox and uniform (random.cu)
 * compiled for the host, so that tests/python/test_cuda.py can check them
 * against the engine's CPU stream without a GPU: prints the first n float64
 * uniforms of the stream of `seed` at counter 0 (Note [Philox streams]). */
#include "../../src/backend/cuda/lib/random.cu"

#include <cstdio>
#include <cstdlib>

/* the runtime symbols random.cu's launchers name, unused here */
int cgcu_sm_count(int) { return 1; }
cudaStream_t cgcu_stream(int, int *) { return 0; }
int cgcu_launch_status(void) { return 0; }

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    const uint64_t seed = strtoull(argv[1], 0, 10);
    const long n = strtol(argv[2], 0, 10);
    for (long i = 0; i < n; i++) {
        uint32_t w[4];
        cgcu_philox(seed, (uint64_t)(i / 2), w);
        printf("%.17g\n", i & 1 ? uniform53(w[2], w[3]) : uniform53(w[0], w[1]));
    }
    return 0;
}
