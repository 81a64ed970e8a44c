/*
 * le_bytes.h - little-endian fields of the core's byte formats that are
 * not model sections (a table model's encoder, the drift reference): 32-
 * and 64-bit integers and doubles at any alignment.
 */
#ifndef KM_LE_BYTES_H
#define KM_LE_BYTES_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void
km_le_put_u32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static inline uint32_t
km_le_get_u32(const uint8_t *p)
{
	uint32_t	v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline void
km_le_put_u64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static inline uint64_t
km_le_get_u64(const uint8_t *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static inline void
km_le_put_f64(uint8_t *p, double x)
{
	uint64_t	v;

	memcpy(&v, &x, 8);
	km_le_put_u64(p, v);
}

static inline double
km_le_get_f64(const uint8_t *p)
{
	uint64_t	v = km_le_get_u64(p);
	double		x;

	memcpy(&x, &v, 8);
	return x;
}

#endif							/* KM_LE_BYTES_H */
