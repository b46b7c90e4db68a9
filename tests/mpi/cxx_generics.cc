/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cxx_generics: shmem.h's C++ overloads, every one on every type of its spec table, with the
 * data they move checked: generic_tables.c's cases (every C11 generic x every type of its
 * table, plain and ctx forms, RMA, AMOs, synchronization, collectives, reductions with
 * std::complex and with C's complex types (g++'s __complex__), scans, the deprecated generics,
 * shmem_sync(team)), compiled as C++, so the
 * same calls resolve to the overloads instead of _Generic. A call that resolved to another
 * type's routine does not compile (the pointer types differ), a result of another type fails a
 * static_assert, and a routine of another operation fails on the data.
 */
#define NAME "cxx_generics"
#include "generic_tables.c"
