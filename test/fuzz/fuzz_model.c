/*
 * libFuzzer target for the model decoder (src/model.c): any byte string
 * must decode to a valid model or to an error, without reading outside the
 * buffer (built with AddressSanitizer and UBSan by "make fuzz").
 *
 * Random bytes almost never pass the checksums, so each input is decoded
 * twice: as it is, and with both CRC-32C fields recomputed, which lets the
 * fuzzer reach the field validation behind them.  A decoded model is then
 * re-encoded and must reproduce the input bytes exactly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define HEADER_CRC_AT (KM_MODEL_HEADER_SIZE - 4)

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
	uint32_t	n,
				d,
				c;
	double	   *storage;
	size_t		doubles;

	if (km_model_peek(buf, len, &n, &d, &c, &err) != KM_OK)
		return;
	doubles = km_model_storage_doubles(n, d, c);
	if (doubles == 0 || doubles > ((size_t) 1 << 24))
		return;
	storage = malloc(doubles * sizeof(double));
	if (storage != NULL &&
		km_model_decode(buf, len, &m, storage, &err) == KM_OK)
	{
		size_t		size = km_model_size(m.n_train, m.n_features, m.n_candidates);
		uint8_t    *again = malloc(size);

		if (size != len)
			abort();
		km_model_encode(&m, again);
		if (memcmp(again, buf, len) != 0)
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
	if (size >= KM_MODEL_HEADER_SIZE)
		put_u32(buf + HEADER_CRC_AT, km_crc32c(buf, HEADER_CRC_AT));
	if (size >= KM_MODEL_HEADER_SIZE + 4)
		put_u32(buf + size - 4, km_crc32c(buf + KM_MODEL_HEADER_SIZE,
										   size - KM_MODEL_HEADER_SIZE - 4));
	decode_and_check(buf, size);
	free(buf);
	return 0;
}
