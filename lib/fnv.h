/* fnv.h: FNV-1a, the one non-cryptographic hash of corral (hash maps,
 * change detection, short stable names). Never for anything an attacker
 * must not be able to collide on purpose. */
#ifndef CORRAL_FNV_H
#define CORRAL_FNV_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_BASIS   14695981039346656037ULL
#define FNV1A_PRIME   1099511628211ULL
#define FNV1A32_BASIS 2166136261u
#define FNV1A32_PRIME 16777619u

/* 64-bit FNV-1a of len bytes. fnv1a_add() goes on from h (FNV1A_BASIS,
 * or an earlier result), so that pieces hash as their concatenation. */
uint64_t fnv1a(const void *buf, size_t len);
uint64_t fnv1a_add(uint64_t h, const void *buf, size_t len);
/* The 32-bit variant (Kubernetes' hash/fnv New32a). */
uint32_t fnv1a32(const void *buf, size_t len);
uint32_t fnv1a32_add(uint32_t h, const void *buf, size_t len);

#endif
