/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bootstrap.c: picks the bootstrap implementation and forwards to it.
 *
 * PMIx is tried first; PMIx_Init fails at once (PMIX_ERR_UNREACH) when no launcher started the
 * process, and then the job is a singleton, unless a launcher's variables say it started
 * several processes (then init fails: N silent singletons are worse than an error). Before
 * init, abort() still works: it falls back to the singleton path, which exits the process.
 */
#include "bootstrap.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "env.h"
#include "error.h"

static const struct fsh_boot_ops *ops = &fsh_boot_single_ops;
static int up; /* fsh_boot_init ran: ops is chosen until the process ends */
static void (*lost_fn)(void);

void fsh_boot_set_lost(void (*fn)(void))
{
    lost_fn = fn;
}

void fsh_boot_lost(void)
{
    if (lost_fn) {
        lost_fn();
    }
    _exit(1);
}

/* A launcher that started several processes without PMIx (srun without --mpi=pmix, an mpirun
 * whose PMIx server cannot be reached) would make each a one-PE job that silently computes
 * alone: the variables launchers set tell, and then init fails. */
static int launched_without_pmix(void)
{
    const struct fsh_config *cfg = fsh_env();
    const struct {
        const char *name, *value;
    } vars[] = {
        {"OMPI_COMM_WORLD_SIZE", cfg->OMPI_COMM_WORLD_SIZE},
        {"PMI_SIZE", cfg->PMI_SIZE},
        {"SLURM_STEP_NUM_TASKS", cfg->SLURM_STEP_NUM_TASKS},
    };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        if (vars[i].value && atol(vars[i].value) > 1) {
            return fsh_err(-ENOTCONN,
                           "launch through PMIx (mpirun of Open MPI 4 or later, srun --mpi=pmix, prterun), or start the program alone for a one-PE job",
                           "launched without PMIx: %s=%s says %s processes were started, but PMIx is not reachable, so each would run as a one-PE job",
                           vars[i].name, vars[i].value, vars[i].value);
        }
    }
    return 0;
}

int fsh_boot_init(struct fsh_boot_info *info)
{
    if (ops == &fsh_boot_single_ops && up) {
        return ops->init(info); /* a later shmem_init of a singleton: no launcher appeared */
    }
    up = 1;
    if (fsh_boot_pmix_ops.init(info) == 0) {
        ops = &fsh_boot_pmix_ops;
        return 0;
    }
    ops = &fsh_boot_single_ops;
    int rc = launched_without_pmix();
    if (rc != 0) {
        return rc;
    }
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

int fsh_boot_node_publish(const char *key, const void *data, size_t len)
{
    return ops->node_publish(key, data, len);
}

int fsh_boot_node_fetch(int leader, const char *key, void **data, size_t *len, double timeout_s)
{
    return ops->node_fetch(leader, key, data, len, timeout_s);
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
