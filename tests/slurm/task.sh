#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# task.sh PROGRAM ARGS...: what srun starts on the simulated hosts of hosts.sh. Prints where the
# task runs, `task R of N on HOST (node NODE, local L of S)`: HOST from the host's own UTS
# namespace, NODE the slurmd that started it, so the test sees each task's host. Then runs
# PROGRAM with OMPI_COMM_WORLD_LOCAL_RANK/SIZE set from Slurm's SLURM_LOCALID and the step's
# task count on this node: tests/coll_test.h knows a host's PEs (SHMEM_TEAM_SHARED's expected
# members) only from Open MPI's variables. fabshmem itself never reads them (it asks PMIx).
per_node=$(echo "${SLURM_STEP_TASKS_PER_NODE:-}" | awk -F, -v node="${SLURM_NODEID:-0}" '{
    # "2(x2),1": 2 tasks on each of 2 nodes, then 1
    k = 0
    for (i = 1; i <= NF; i++) {
        n = $i
        r = 1
        if (match(n, /\(x[0-9]+\)/)) {
            r = substr(n, RSTART + 2, RLENGTH - 3)
            n = substr(n, 1, RSTART - 1)
        }
        for (j = 0; j < r; j++) {
            if (k++ == node) {
                print n
            }
        }
    }
}')
if [ -z "${SLURM_LOCALID:-}" ] || [ -z "$per_node" ]; then
    echo "task.sh: no SLURM_LOCALID or SLURM_STEP_TASKS_PER_NODE: run it under srun" >&2
    exit 2
fi
echo "task $SLURM_PROCID of $SLURM_STEP_NUM_TASKS on $(hostname) (node $SLURMD_NODENAME," \
    "local $SLURM_LOCALID of $per_node)"
OMPI_COMM_WORLD_LOCAL_RANK=$SLURM_LOCALID
OMPI_COMM_WORLD_LOCAL_SIZE=$per_node
export OMPI_COMM_WORLD_LOCAL_RANK OMPI_COMM_WORLD_LOCAL_SIZE
exec "$@"
