// SPDX-License-Identifier: MIT
/*
 * NBD: the export's block sizes and transmission flags, the errno -> wire
 * mapping, and the encoders of transmission-phase replies.
 */
#include <errno.h>
#include <string.h>

#include "nbd/proto.h"
#include "nbd/wire.h"

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

void nbd_export_block_sizes(struct nbd_export *ex, uint64_t preferred_hint)
{
	uint64_t pref = preferred_hint ? preferred_hint : 4096;

	if (pref > NBD_MAX_BLOCK)
		pref = NBD_MAX_BLOCK;
	while (!is_pow2(pref))          /* round down to a power of two */
		pref &= pref - 1;
	if (pref < NBD_MIN_BLOCK)
		pref = NBD_MIN_BLOCK;
	ex->min_block = NBD_MIN_BLOCK;
	ex->pref_block = (uint32_t)pref;
	ex->max_block = NBD_MAX_BLOCK;
}

int nbd_export_check(const struct nbd_export *ex)
{
	uint32_t lo = ex->min_block > 512 ? ex->min_block : 512;
	uint64_t floor_max = ex->pref_block < ex->size ? ex->pref_block : ex->size;

	if (!ex->name || strlen(ex->name) > NBD_MAX_STRING)
		return -EINVAL;
	if (ex->description && strlen(ex->description) > NBD_MAX_STRING)
		return -EINVAL;
	if (!is_pow2(ex->min_block) || ex->min_block > 65536 || ex->size % ex->min_block)
		return -EINVAL;
	if (!is_pow2(ex->pref_block) || ex->pref_block < lo)
		return -EINVAL;
	if (ex->max_block != 0xffffffffu && ex->max_block % ex->min_block)
		return -EINVAL;
	if (ex->max_block < floor_max || ex->max_block < ex->min_block)
		return -EINVAL;
	return 0;
}

uint16_t nbd_tflags(const struct nbd_export *ex, unsigned session)
{
	unsigned f = ex->flags;
	uint16_t t = NBD_FLAG_HAS_FLAGS;

	if (f & NBD_EXPORT_READ_ONLY)
		t |= NBD_FLAG_READ_ONLY;
	else {
		if (f & NBD_EXPORT_FUA)
			t |= NBD_FLAG_SEND_FUA;
		if (f & NBD_EXPORT_TRIM)
			t |= NBD_FLAG_SEND_TRIM;
		if (f & NBD_EXPORT_WRITE_ZEROES) {
			t |= NBD_FLAG_SEND_WRITE_ZEROES;
			if (f & NBD_EXPORT_FAST_ZERO)
				t |= NBD_FLAG_SEND_FAST_ZERO;
		}
	}
	if (f & NBD_EXPORT_FLUSH)
		t |= NBD_FLAG_SEND_FLUSH;
	if (f & NBD_EXPORT_ROTATIONAL)
		t |= NBD_FLAG_ROTATIONAL;
	if (f & NBD_EXPORT_FLUSH_ALL_CONNS)
		t |= NBD_FLAG_CAN_MULTI_CONN;
	/* One content chunk always fits: the maximum block is 32 MiB. */
	if (session & NBD_SESSION_STRUCTURED)
		t |= NBD_FLAG_SEND_DF;
	return t;
}

uint32_t nbd_errno_to_wire(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:          return 0;
	case EPERM:
	case EROFS:
	case EACCES:     return NBD_EPERM;
	case ENOMEM:     return NBD_ENOMEM;
	case EINVAL:     return NBD_EINVAL;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:      return NBD_ENOSPC;
	case EOVERFLOW:  return NBD_EOVERFLOW;
	case ENOTSUP:    return NBD_ENOTSUP;   /* == EOPNOTSUPP on Linux */
	case ESHUTDOWN:  return NBD_ESHUTDOWN;
	default:         return NBD_EIO;
	}
}

size_t nbd_simple_reply(uint8_t out[NBD_SIMPLE_REPLY_BYTES], uint64_t cookie, int error)
{
	nbd_put32(out, NBD_SIMPLE_REPLY_MAGIC);
	nbd_put32(out + 4, nbd_errno_to_wire(error));
	nbd_put64(out + 8, cookie);
	return NBD_SIMPLE_REPLY_BYTES;
}

size_t nbd_chunk_header(uint8_t out[NBD_CHUNK_HEADER_BYTES], uint64_t cookie, uint16_t flags,
			uint16_t type, uint32_t length)
{
	nbd_put32(out, NBD_STRUCTURED_REPLY_MAGIC);
	nbd_put16(out + 4, flags);
	nbd_put16(out + 6, type);
	nbd_put64(out + 8, cookie);
	nbd_put32(out + 16, length);
	return NBD_CHUNK_HEADER_BYTES;
}

size_t nbd_chunk_data(uint8_t out[NBD_CHUNK_DATA_HEADER_BYTES], uint64_t cookie, uint16_t flags,
		      uint64_t offset, uint32_t data_len)
{
	if (data_len == 0 || data_len > UINT32_MAX - 8)
		return 0;
	nbd_chunk_header(out, cookie, flags, NBD_REPLY_TYPE_OFFSET_DATA, data_len + 8);
	nbd_put64(out + NBD_CHUNK_HEADER_BYTES, offset);
	return NBD_CHUNK_DATA_HEADER_BYTES;
}

size_t nbd_chunk_none(uint8_t out[NBD_CHUNK_HEADER_BYTES], uint64_t cookie)
{
	return nbd_chunk_header(out, cookie, NBD_REPLY_FLAG_DONE, NBD_REPLY_TYPE_NONE, 0);
}

size_t nbd_chunk_error(uint8_t *out, size_t cap, uint64_t cookie, unsigned flags, int error,
		       const char *msg, uint64_t offset)
{
	int at = (flags & NBD_CHUNK_AT_OFFSET) != 0;
	size_t mlen = msg ? strnlen(msg, NBD_MAX_ERRMSG) : 0;
	size_t payload = 6 + mlen + (at ? 8 : 0);
	uint32_t wire = nbd_errno_to_wire(error);

	if (cap < NBD_CHUNK_HEADER_BYTES + payload)
		return 0;
	nbd_chunk_header(out, cookie, (uint16_t)(flags & 0xffff),
			 at ? NBD_REPLY_TYPE_ERROR_OFFSET : NBD_REPLY_TYPE_ERROR,
			 (uint32_t)payload);
	uint8_t *p = out + NBD_CHUNK_HEADER_BYTES;
	nbd_put32(p, wire ? wire : NBD_EIO);   /* an error chunk's error MUST be nonzero */
	nbd_put16(p + 4, (uint16_t)mlen);
	if (mlen)
		memcpy(p + 6, msg, mlen);
	if (at)
		nbd_put64(p + 6 + mlen, offset);
	return NBD_CHUNK_HEADER_BYTES + payload;
}

size_t nbd_reply_read(uint8_t *out, size_t cap, unsigned session, uint64_t cookie,
		      uint64_t offset, uint32_t len)
{
	if (!(session & NBD_SESSION_STRUCTURED))
		return cap < NBD_SIMPLE_REPLY_BYTES ? 0 : nbd_simple_reply(out, cookie, 0);
	if (len == 0)
		return cap < NBD_CHUNK_HEADER_BYTES ? 0 : nbd_chunk_none(out, cookie);
	if (cap < NBD_CHUNK_DATA_HEADER_BYTES)
		return 0;
	return nbd_chunk_data(out, cookie, NBD_REPLY_FLAG_DONE, offset, len);
}

size_t nbd_reply_block_status(uint8_t out[NBD_CHUNK_HEADER_BYTES], uint64_t cookie,
			      uint32_t payload_len)
{
	return nbd_chunk_header(out, cookie, NBD_REPLY_FLAG_DONE, NBD_REPLY_TYPE_BLOCK_STATUS,
				payload_len);
}

size_t nbd_reply_error(uint8_t *out, size_t cap, unsigned session, uint64_t cookie, int error,
		       const char *msg)
{
	if (!(session & NBD_SESSION_STRUCTURED)) {
		if (cap < NBD_SIMPLE_REPLY_BYTES)
			return 0;
		/* a simple reply cannot carry error 0 and mean failure */
		return nbd_simple_reply(out, cookie, error ? error : -EIO);
	}
	return nbd_chunk_error(out, cap, cookie, NBD_REPLY_FLAG_DONE, error, msg, 0);
}
