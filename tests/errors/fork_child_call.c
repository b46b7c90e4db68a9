/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fork_child_call: a child forked after shmem_init is no PE. Its OpenSHMEM call ends the child
 * at once (status 1) with a message saying so, and not the job: the parents wait for it, report
 * its status and how long it took, and the job exits with that status.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
        shmem_barrier_all();
        printf("fork_child_call: the child's shmem_barrier_all returned\n");
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    printf("fork_child_call: PE %d: child exit %d after %s\n", shmem_my_pe(), code,
           s < 2.0 ? "under 2 s" : "2 s or more");
    shmem_finalize();
    return code;
}
