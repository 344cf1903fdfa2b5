/* fnv.c: FNV-1a, 64 and 32 bits (see fnv.h). */
#include "fnv.h"

uint64_t fnv1a_add(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV1A_PRIME;
	}
	return h;
}

uint64_t fnv1a(const void *buf, size_t len)
{
	return fnv1a_add(FNV1A_BASIS, buf, len);
}

uint32_t fnv1a32_add(uint32_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV1A32_PRIME;
	}
	return h;
}

uint32_t fnv1a32(const void *buf, size_t len)
{
	return fnv1a32_add(FNV1A32_BASIS, buf, len);
}
