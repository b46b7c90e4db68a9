/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bootstrap_single.c: the job of one PE, for programs started without a launcher.
 *
 * Everything is trivial except abort, which exits the process with the status (there is no
 * launcher to tell).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"

static int single_init(struct fsh_boot_info *info)
{
    memset(info, 0, sizeof(*info));
    info->size = 1;
    info->local_size = 1;
    info->num_nodes = 1;
    info->node_leader = 0;
    info->singleton = 1;
    return 0;
}

static int single_allgather(const void *mine, size_t len, void *all, double timeout_s)
{
    memmove(all, mine, len);
    return 0;
}

static int single_fence(double timeout_s, void (*progress)(void))
{
    return 0;
}

/* The only PE is its node's leader: nobody fetches what it publishes. */
static int single_node_publish(const char *key, const void *data, size_t len)
{
    (void)key, (void)data, (void)len;
    return 0;
}

static int single_node_fetch(int leader, const char *key, void **data, size_t *len,
                             double timeout_s)
{
    (void)leader, (void)key, (void)timeout_s;
    *data = NULL;
    *len = 0;
    return -ENOENT;
}

static void __attribute__((noreturn)) single_abort(int status, const char *msg)
{
    _exit(status);
}

static void single_fini(void)
{
}

const struct fsh_boot_ops fsh_boot_single_ops = {
    .name = "singleton",
    .init = single_init,
    .allgather = single_allgather,
    .fence = single_fence,
    .node_publish = single_node_publish,
    .node_fetch = single_node_fetch,
    .abort = single_abort,
    .fini = single_fini,
};
