/*
 * bootstrap.c: picks the bootstrap implementation and forwards to it.
 *
 * PMIx is tried first; PMIx_Init fails at once (PMIX_ERR_UNREACH) when no launcher started the
 * process, and then the job is a singleton. Before init, abort() still works: it falls back to
 * the singleton path, which exits the process.
 */
#include "bootstrap.h"

static const struct fsh_boot_ops *ops = &fsh_boot_single_ops;

int fsh_boot_init(struct fsh_boot_info *info)
{
    if (fsh_boot_pmix_ops.init(info) == 0) {
        ops = &fsh_boot_pmix_ops;
        return 0;
    }
    ops = &fsh_boot_single_ops;
    return ops->init(info);
}

int fsh_boot_allgather(const void *mine, size_t len, void *all, double timeout_s)
{
    return ops->allgather(mine, len, all, timeout_s);
}

int fsh_boot_fence(double timeout_s, void (*progress)(void))
{
    return ops->fence(timeout_s, progress);
}

void fsh_boot_abort(int status, const char *msg)
{
    ops->abort(status, msg);
}

void fsh_boot_fini(void)
{
    ops->fini();
}

const char *fsh_boot_name(void)
{
    return ops->name;
}
