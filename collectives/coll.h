/*
 * coll.h: collective operations, built on the one-sided layer (rma.h) and never on libfabric.
 */
#ifndef FSH_COLL_H
#define FSH_COLL_H

/* Allocate the collectives' symmetric state (same on every PE) and register their
 * remote-event handler. Called once by init after the heap is up. */
int fsh_coll_init(void);
void fsh_coll_fini(void);

/* shmem_barrier_all: quiet, then synchronize all PEs. */
int fsh_coll_barrier_all(void);
/* shmem_sync_all: synchronize all PEs; earlier puts are not completed by it. */
int fsh_coll_sync_all(void);

#endif
