/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signal_pc: a producer (PE 0) streams messages to a consumer (PE 1) through a ring of SLOTS
 * buffers on the consumer, with put-with-signal: the data and a per-slot signal travel together,
 * and the signal is never visible before its data, so the consumer needs no fence, flag write
 * or extra round trip. The consumer returns slots by an atomic add on the producer's counter.
 *
 *   mpirun -n 2 ./examples/signal_pc
 *
 * Why a signal per slot, set to the message number: on a fabric that delivers out of order
 * (EFA's SRD), two messages in flight may land in any order, so one shared "messages so far"
 * counter would not say which ones are complete. A slot is reused only after the consumer
 * returned it, so each slot has one message in flight at most. Needs OpenSHMEM 1.5.
 * Exit status 0 when every message arrived intact, 1 otherwise.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>

#define SLOTS 4
#define MSG 512 /* longs per message */
#define COUNT 2000

static long slots[SLOTS][MSG]; /* on the consumer: where messages land */
static uint64_t ready[SLOTS];  /* on the consumer: number (1-based) of the message in a slot */
static uint64_t returned;      /* on the producer: slots the consumer has finished with */

static long item(int k, int i)
{
    return (long)k * 7919L + i;
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes < 2) {
        if (me == 0) {
            printf("signal_pc: needs 2 PEs (mpirun -n 2); nothing to do\n");
        }
        shmem_finalize();
        return 0;
    }
    long wrong = 0;
    if (me == 0) { /* producer */
        long msg[MSG];
        for (int k = 0; k < COUNT; k++) {
            if (k >= SLOTS) { /* wait until message k - SLOTS has been consumed */
                shmem_uint64_wait_until(&returned, SHMEM_CMP_GE, (uint64_t)(k - SLOTS + 1));
            }
            for (int i = 0; i < MSG; i++) {
                msg[i] = item(k, i);
            }
            shmem_putmem_signal(slots[k % SLOTS], msg, sizeof(msg), &ready[k % SLOTS],
                                (uint64_t)k + 1, SHMEM_SIGNAL_SET, 1);
        }
    } else if (me == 1) { /* consumer */
        for (int k = 0; k < COUNT; k++) {
            int s = k % SLOTS;
            shmem_signal_wait_until(&ready[s], SHMEM_CMP_EQ, (uint64_t)k + 1);
            for (int i = 0; i < MSG; i++) {
                wrong += slots[s][i] != item(k, i);
            }
            shmem_uint64_atomic_add(&returned, 1, 0); /* give the slot back */
        }
        printf("signal_pc: consumer received %d messages of %zu bytes through %d slots: %s\n",
               COUNT, sizeof(slots[0]), SLOTS, wrong ? "WRONG" : "OK");
    }
    shmem_barrier_all();
    shmem_finalize();
    return wrong ? 1 : 0;
}
