/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device_dead: a peer killed while a device-API wait depends on it (tests/faults/device_dead.sh).
 * PE 1 kills itself (SIGKILL) once both have a handle; PE 0 waits, with the header's own code,
 * on a signal only PE 1 would send. The proxy's idle wait probes the peers, finds PE 1 gone,
 * and sets the error word: PE 0's wait must return SHMEMX_DEV_EPROXY, and PE 0 prints
 * `device_dead: PASS (wait returned after S s, error word W)` (else FAIL) and leaves with
 * _exit (its peer is dead: finalize could not sync).
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <shmem.h>
#include <shmemx_device.h>

int main(void)
{
    shmem_init();
    shmemx_device_t h;
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    if (shmemx_device_handle_host(&h) != 0) {
        printf("device_dead: FAIL (no handle)\n");
        return 1;
    }
    shmem_barrier_all();
    if (shmem_my_pe() == 1) {
        sleep(1);
        raise(SIGKILL);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = shmemx_dev_signal_wait_until(h, sig, SHMEMX_DEV_CMP_GE, 1, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    unsigned long long e = (unsigned long long)__atomic_load_n(h.error, __ATOMIC_ACQUIRE);
    if (rc == SHMEMX_DEV_EPROXY && e != 0) {
        printf("device_dead: PASS (wait returned after %.1f s, error word %#llx)\n", s, e);
    } else {
        printf("device_dead: FAIL (wait returned %d after %.1f s, error word %#llx)\n", rc, s, e);
    }
    fflush(stdout);
    _exit(0);
}
