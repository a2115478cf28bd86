// SPDX-License-Identifier: MIT
/*
 * NBD transmission phase: decode a 28-byte request header and decide what to
 * do with it. The errors follow doc/proto.md ("Error values", "Block size
 * constraints"):
 *   bad magic                                   -> close (nothing can be trusted)
 *   unknown or unsupported command              -> EINVAL
 *   WRITE/TRIM/WRITE_ZEROES on a read-only export -> EPERM
 *   command not advertised in the flags sent    -> EINVAL
 *   flag unknown, not advertised or not documented for the command -> EINVAL
 *   FLUSH with nonzero offset or length         -> EINVAL (they MUST be zero)
 *   length 0 (READ/WRITE/TRIM/WRITE_ZEROES)     -> EINVAL (spec: unspecified,
 *                                                  but no disconnect)
 *   offset or length not a multiple of the minimum block size -> EINVAL
 *   length over the maximum block size (READ, WRITE, WRITE_ZEROES without
 *   FAST_ZERO; TRIM has no maximum)             -> EINVAL (not EOVERFLOW: the
 *                                                  spec keeps that for DF reads)
 *   past the end: WRITE/WRITE_ZEROES -> ENOSPC, READ/TRIM/BLOCK_STATUS -> EINVAL
 *   BLOCK_STATUS without base:allocation selected -> EINVAL (spec: SHOULD);
 *   its flag REQ_ONE only; its length has no maximum (a hint: the reply
 *   may cover less)
 * A rejected WRITE's payload is still on the wire and must be discarded,
 * unless it is longer than NBD_DRAIN_MAX: then the connection closes.
 */
#include <errno.h>

#include "nbd/proto.h"
#include "nbd/wire.h"

static int verdict_error(struct nbd_request *rq, int err)
{
	rq->error = err;
	if (rq->payload > NBD_DRAIN_MAX)
		return NBD_REQ_CLOSE;
	return NBD_REQ_ERROR;
}

static unsigned allowed_flags(uint16_t type, uint16_t tflags)
{
	if (type == NBD_CMD_BLOCK_STATUS)
		return NBD_CMD_FLAG_REQ_ONE;
	unsigned ok = (tflags & NBD_FLAG_SEND_FUA) ? NBD_CMD_FLAG_FUA : 0;

	if (type == NBD_CMD_READ && (tflags & NBD_FLAG_SEND_DF))
		ok |= NBD_CMD_FLAG_DF;
	if (type == NBD_CMD_WRITE_ZEROES) {
		ok |= NBD_CMD_FLAG_NO_HOLE;
		if (tflags & NBD_FLAG_SEND_FAST_ZERO)
			ok |= NBD_CMD_FLAG_FAST_ZERO;
	}
	return ok;
}

static int advertised(uint16_t type, uint16_t tflags, unsigned session)
{
	switch (type) {
	case NBD_CMD_READ:
	case NBD_CMD_WRITE:        return 1;
	case NBD_CMD_FLUSH:        return (tflags & NBD_FLAG_SEND_FLUSH) != 0;
	case NBD_CMD_TRIM:         return (tflags & NBD_FLAG_SEND_TRIM) != 0;
	case NBD_CMD_WRITE_ZEROES: return (tflags & NBD_FLAG_SEND_WRITE_ZEROES) != 0;
	case NBD_CMD_BLOCK_STATUS: return (session & NBD_SESSION_ALLOCATION) != 0;
	default:                   return 0;   /* CACHE, RESIZE, unknown */
	}
}

int nbd_request_parse(const uint8_t hdr[NBD_REQUEST_BYTES], const struct nbd_export *ex,
		      uint16_t tflags, unsigned session, struct nbd_request *rq)
{
	rq->flags = nbd_get16(hdr + 4);
	rq->type = nbd_get16(hdr + 6);
	rq->cookie = nbd_get64(hdr + 8);
	rq->offset = nbd_get64(hdr + 16);
	rq->length = nbd_get32(hdr + 24);
	rq->payload = rq->type == NBD_CMD_WRITE ? rq->length : 0;
	rq->error = 0;

	if (nbd_get32(hdr) != NBD_REQUEST_MAGIC) {
		rq->payload = 0;
		rq->error = -EPROTO;
		return NBD_REQ_CLOSE;
	}
	uint16_t type = rq->type;
	if (type == NBD_CMD_DISC)
		return NBD_REQ_DISC;
	int writes = type == NBD_CMD_WRITE || type == NBD_CMD_TRIM || type == NBD_CMD_WRITE_ZEROES;
	if (writes && (tflags & NBD_FLAG_READ_ONLY))
		return verdict_error(rq, -EPERM);
	if (!advertised(type, tflags, session))
		return verdict_error(rq, -EINVAL);
	if (rq->flags & ~allowed_flags(type, tflags))
		return verdict_error(rq, -EINVAL);
	if (type == NBD_CMD_FLUSH)
		return rq->offset || rq->length ? verdict_error(rq, -EINVAL) : NBD_REQ_OK;

	/* READ, WRITE, TRIM, WRITE_ZEROES, BLOCK_STATUS: a range of the export */
	if (rq->length == 0)
		return verdict_error(rq, -EINVAL);
	if ((rq->offset | rq->length) & (uint64_t)(ex->min_block - 1))
		return verdict_error(rq, -EINVAL);
	int capped = type == NBD_CMD_READ || type == NBD_CMD_WRITE ||
		     (type == NBD_CMD_WRITE_ZEROES && !(rq->flags & NBD_CMD_FLAG_FAST_ZERO));
	if (capped && rq->length > ex->max_block)
		return verdict_error(rq, -EINVAL);
	if (rq->offset > ex->size || rq->length > ex->size - rq->offset)
		return verdict_error(rq, type == NBD_CMD_WRITE || type == NBD_CMD_WRITE_ZEROES
					 ? -ENOSPC : -EINVAL);
	return NBD_REQ_OK;
}
