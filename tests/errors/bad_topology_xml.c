/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bad_topology_xml: FABSHMEM_TOPOLOGY_XML naming a file that does not exist stops shmem_init
 * with the variable, the path and how to write a topology file.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    printf("bad_topology_xml: shmem_init returned\n");
    shmem_finalize();
    return 0;
}
