/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init_forked_child: a child forked from a PE is no PE of the job, also after the PE called
 * shmem_finalize (when the library may be initialized again, by the PE itself): its shmem_init
 * ends the child with a report that says so. The parent ends with the child's status.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    shmem_finalize();
    pid_t child = fork();
    if (child == 0) {
        shmem_init();
        printf("init_forked_child: shmem_init returned in the child\n");
        return 0;
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) {
        perror("init_forked_child: fork/waitpid");
        return 2;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}
