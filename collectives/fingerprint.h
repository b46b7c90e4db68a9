/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fingerprint.h: a collective call's identity in 16 bits (fingerprint.c), which notify.c
 * carries and compares, and the report that names two calls that differ.
 */
#ifndef FSH_FINGERPRINT_H
#define FSH_FINGERPRINT_H

#include <stdint.h>

/* What a fingerprint covers, and the arguments each kind hashes (a, b, c, d in order). */
enum fsh_fp_kind {
    FSH_FP_BCAST = 1, /* nelems, PE_root, element size */
    FSH_FP_REDUCE,   /* nreduce, type, operation, element size */
    FSH_FP_ALLTOALL, /* nelems, element size */
    FSH_FP_ALLTOALLS, /* nelems, dst, sst, element size */
    FSH_FP_FCOLLECT, /* nelems, element size */
    FSH_FP_MALLOC,   /* size, alignment, offset of the block (0: NULL) */
    FSH_FP_CALLOC,   /* size, 0, offset */
    FSH_FP_ALIGN,    /* size, alignment, offset */
    FSH_FP_REALLOC,  /* size, offset of the old block, offset of the new one */
    FSH_FP_FREE,     /* offset of the block */
    FSH_FP_MALLOC_DEVICE, /* size, 0, offset */
    FSH_FP_FREE_DEVICE,   /* offset */
    FSH_FP_NKINDS
};
/* The room this PE's records of its last two calls take in the collectives' scratch. */
#define FSH_FINGERPRINT_BYTES 128

/* Keep the records at recs (FSH_FINGERPRINT_BYTES in the symmetric heap, zero, at heap offset
 * recs_off on every PE), and read a peer's through landing (8 registered bytes). Before it,
 * fingerprints are made but not recorded. */
void fsh_fingerprint_open(void *recs, uint64_t recs_off, uint64_t *landing);
/* The fingerprint of a call (never 0), and its record: this PE keeps its last two calls'
 * arguments in symmetric memory, where a PE that meets another fingerprint reads them to name
 * both calls. */
uint16_t fsh_fingerprint_of(enum fsh_fp_kind kind, uint64_t a, uint64_t b, uint64_t c,
                            uint64_t d);
/* theirs, the fingerprint world PE pe sent (0: it sent none where one was expected), differs
 * from mine: records an error naming both calls (reading pe's records) and returns -EPROTO. */
int fsh_fingerprint_report(int pe, uint16_t mine, uint16_t theirs);
/* The same where theirs carried only the fingerprint bits in `bits` (a put's fingerprint in a
 * 4-byte immediate's spare bits, notify.c): the sender's records are matched on those. */
int fsh_fingerprint_report_bits(int pe, uint16_t mine, uint16_t theirs, uint16_t bits);

#endif
