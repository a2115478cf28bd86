/*
 * LD_PRELOAD helper for `make bench`: lets fio's nbd engine read the PSK file
 * an nbds:// URI names (tls-psk-file=FILE).
 *
 * libnbd refuses URI parameters that open a local file unless the program
 * has called nbd_set_uri_allow_local_file(h, true); fio 3.33's nbd engine
 * passes its --uri straight to nbd_connect_uri and never makes that call, so
 * fio cannot reach a TLS-PSK server at all. This library wraps
 * nbd_connect_uri: it allows local files on the handle, then calls libnbd's
 * own function. Nothing else of fio's I/O path changes, so plain and TLS
 * runs are measured by the same instrument.
 *
 * Built by scripts/bench.sh (cc -shared -fPIC); libnbd's header is not
 * needed: the two prototypes are libnbd's stable ABI (libnbd(3)).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>

struct nbd_handle;

int nbd_connect_uri(struct nbd_handle *h, const char *uri);

typedef int (*connect_uri_fn)(struct nbd_handle *, const char *);
typedef int (*allow_local_fn)(struct nbd_handle *, bool);

int nbd_connect_uri(struct nbd_handle *h, const char *uri)
{
    connect_uri_fn next = (connect_uri_fn)dlsym(RTLD_NEXT, "nbd_connect_uri");
    allow_local_fn allow = (allow_local_fn)dlsym(RTLD_NEXT, "nbd_set_uri_allow_local_file");

    if (!next) {
        fprintf(stderr, "fio_nbd_tls: libnbd's nbd_connect_uri not found\n");
        return -1;
    }
    /* a libnbd without the call (before 1.2) cannot read the file anyway:
     * its own error then says so */
    if (allow && allow(h, true) == -1)
        return -1;
    return next(h, uri);
}
