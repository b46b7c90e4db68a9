/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_uobj.h: between mock_uobj.c and the mock driver's other files (mock_cuda.c counts calls,
 * mock_stream.c runs a launch's drop, mock_graph.c holds references), not exported.
 * An owner of user-object references is any address standing for it: a graph, an executable
 * graph, a launch; NULL is the calling program.
 */
#ifndef FSH_MOCK_UOBJ_H
#define FSH_MOCK_UOBJ_H

#include <cuda.h>

#define MOCK_HIDDEN __attribute__((visibility("hidden")))

/* count references of h to owner: new ones, or (move) taken from the program's. */
MOCK_HIDDEN CUresult mock_uobj_add(const void *owner, CUuserObject h, unsigned int count,
                                   int move);
/* owner gives up count references of h. */
MOCK_HIDDEN CUresult mock_uobj_sub(const void *owner, CUuserObject h, unsigned int count);
/* to gets references of its own to every object from holds: how many objects, -1 when out of
 * memory (then to holds none). */
MOCK_HIDDEN int mock_uobj_copy(const void *from, const void *to);
/* owner gives up all its references (a destructor may be queued). */
MOCK_HIDDEN void mock_uobj_drop(const void *owner);
/* mock_cuda.c's call count of an entry point. */
MOCK_HIDDEN void mock_uobj_count(const char *fn);

#endif
