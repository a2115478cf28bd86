/* SPDX-License-Identifier: MIT */
/* Big-endian loads and stores for the NBD wire format (private to src/nbd). */
#ifndef URAID_NBD_WIRE_H
#define URAID_NBD_WIRE_H

#include <stdint.h>

static inline void nbd_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void nbd_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static inline void nbd_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static inline uint16_t nbd_get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline uint32_t nbd_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t nbd_get64(const uint8_t *p)
{
	return (uint64_t)nbd_get32(p) << 32 | nbd_get32(p + 4);
}

#endif
