/*
 * libFuzzer target for the model decoder (src/core/model/model.c): any byte string
 * must decode to a valid model or to an error, without reading outside the
 * buffer (built with AddressSanitizer and UBSan by "make fuzz").
 *
 * Both formats: format 1 (0.1.0's, read only) and format 2 (sections).
 * Random bytes almost never pass the checksums, so each input is decoded
 * twice: as it is, and with every CRC-32C recomputed (format 1: header and
 * payload; format 2: header and each section whose bounds hold), which
 * lets the fuzzer reach the field validation behind them.  A decoded model
 * is then re-encoded in its format and must reproduce the input bytes
 * exactly (format 2: unless the input had unknown optional sections, which
 * are skipped and so not written back).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "model.h"

#define V1_CRC_AT (KM_MODEL_V1_HEADER_SIZE - 4)
#define V2_CRC_AT (KM_MODEL_HEADER_SIZE - 4)

static void
put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static void
decode_and_check(const uint8_t *buf, size_t len)
{
	km_model	m;
	km_error	err;
	km_model_shape shape;
	double	   *storage;
	size_t		doubles;

	if (km_model_peek(buf, len, &shape, &err) != KM_OK)
		return;
	doubles = km_model_storage_doubles(&shape);
	if (doubles == 0 || doubles > ((size_t) 1 << 24))
		return;
	storage = malloc(doubles * sizeof(double));
	if (storage != NULL &&
		km_model_decode(buf, len, &m, storage, &err) == KM_OK)
	{
		bool		v1 = m.format_version == 1;
		km_model_shape again_shape = km_model_shape_of(&m);
		size_t		size = v1 ? km_model_v1_size(m.n_train, m.n_features, m.n_candidates) :
			km_model_size(&again_shape);
		uint8_t    *again = malloc(size);
		km_model	m2;

		if (v1 ? size != len : size > len)
			abort();
		if (v1)
			km_model_encode_v1(&m, again);
		else
			km_model_encode(&m, again);
		if (size == len && memcmp(again, buf, len) != 0)
			abort();
		if (km_model_decode(again, size, &m2, NULL, &err) != KM_OK)
			abort();
		free(again);
	}
	free(storage);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t    *buf;

	decode_and_check(data, size);

	/* the same bytes with valid checksums; exact-size copy for ASan */
	buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	if (size >= 6 && buf[4] == 1 && buf[5] == 0)
	{
		if (size >= KM_MODEL_V1_HEADER_SIZE)
			put_u32(buf + V1_CRC_AT, km_crc32c(buf, V1_CRC_AT));
		if (size >= KM_MODEL_V1_HEADER_SIZE + 4)
			put_u32(buf + size - 4, km_crc32c(buf + KM_MODEL_V1_HEADER_SIZE,
											   size - KM_MODEL_V1_HEADER_SIZE - 4));
	}
	else if (size >= KM_MODEL_HEADER_SIZE)
	{
		size_t		at = KM_MODEL_HEADER_SIZE;

		put_u32(buf + V2_CRC_AT, km_crc32c(buf, V2_CRC_AT));
		while (size - at >= KM_SECTION_OVERHEAD)
		{
			uint64_t	length = 0;

			for (int k = 0; k < 8; k++)
				length |= (uint64_t) buf[at + 4 + k] << (8 * k);
			if (length > size - at - KM_SECTION_OVERHEAD)
				break;
			put_u32(buf + at + 12 + length, km_crc32c(buf + at, 12 + (size_t) length));
			at += KM_SECTION_OVERHEAD + (size_t) length;
		}
	}
	decode_and_check(buf, size);
	free(buf);
	return 0;
}
