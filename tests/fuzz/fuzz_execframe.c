/* fuzz_execframe.c: what remote exec reads from its peer (lib/execframe.h):
 * a stream of frames, whose every accepted frame must lie within the
 * bytes read and name a known stream; a status and a resize payload; and
 * the head of an HTTP answer, whose length must lie within the input. The
 * first byte picks which. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "execframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	switch (data[0] % 3) {
	case 0: {
		size_t off = 0;
		struct execframe f;
		long r;
		while ((r = execframe_parse(p + off, n - off, &f)) > 0) {
			if (f.stream > EXECFRAME_RESIZE || f.len > EXECFRAME_MAX ||
			    (size_t)r != EXECFRAME_HEADER + f.len || (size_t)r > n - off ||
			    f.payload != p + off + EXECFRAME_HEADER)
				abort();
			if (f.stream == EXECFRAME_STATUS) {
				int code = -1;
				char *msg = NULL;
				int s = execframe_status_parse(f.payload, f.len, &code, &msg);
				if ((s == 0 && (code < 0 || code > 255)) || (s == 1 && !msg) ||
				    (s != 1 && msg))
					abort();
				free(msg);
			}
			uint16_t cols, rows;
			if (execframe_resize_parse(f.payload, f.len, &cols, &rows) == 0 &&
			    f.len != 4)
				abort();
			off += (size_t)r;
		}
		break;
	}
	default: {
		/* a copy, so that a read past the end is the sanitizer's to see */
		char *copy = malloc(n ? n : 1);
		memcpy(copy, p, n);
		int status = 0;
		long clen = 0;
		long h = execframe_http_head(copy, n, &status, &clen);
		if (h > 0 && ((size_t)h > n || status < 0 || status > 999 || clen < -1))
			abort();
		free(copy);
		break;
	}
	}
	return 0;
}
