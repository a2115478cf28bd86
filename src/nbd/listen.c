// SPDX-License-Identifier: MIT
/* Listening sockets of the NBD server: a Unix socket file or a TCP address. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "nbd/server.h"

#define LISTEN_BACKLOG 128

#define STALE_WAIT_MS 2000        /* for a server's greeting, or a dying socket's end */

/*
 * Is a server answering on the socket file? (Then it is not ours to
 * replace.) A connect alone does not tell: a server killed a moment ago
 * (kill -9) may still have its listening socket, held by its io_uring
 * until the kernel tears that down, and the connection waits in its
 * backlog until then and is reset. So a connection that succeeds counts
 * as a server once something arrives on it (an NBD server greets at
 * once), as a dead one when it is reset or closed; one that stays silent
 * past STALE_WAIT_MS is left alone too, to be safe.
 */
static bool socket_in_use(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0) {
		bool used = errno != ECONNREFUSED && errno != ENOENT;
		close(fd);
		return used;
	}
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;
	do {
		n = poll(&p, 1, STALE_WAIT_MS);
	} while (n < 0 && errno == EINTR);
	bool used = true;
	if (n == 1) {
		char c;
		ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);
		used = r > 0;   /* 0: closed; -1 (ECONNRESET): the dead listener went */
	}
	close(fd);
	return used;
}

int nbd_listen_unix(const char *path, unsigned mode, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;

	if (strlen(path) >= sizeof(sa.sun_path))
		return uraid_errf(err, errlen, -ENAMETOOLONG, "%s: socket path longer than %zu bytes",
				  path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return uraid_errf(err, errlen, -EEXIST, "%s exists and is not a socket; "
					  "choose another path", path);
		if (socket_in_use(&sa))
			return uraid_errf(err, errlen, -EADDRINUSE, "%s: another server is "
					  "listening there", path);
		unlink(path);   /* left behind by a server that is gone */
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return uraid_errf(err, errlen, -errno, "socket: %s", strerror(errno));
	/* the mode holds from the moment the file exists: no window with a wider one */
	mode_t old = umask(0777 & ~mode);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	int saved = errno;
	umask(old);
	if (rc < 0) {
		close(fd);
		return uraid_errf(err, errlen, -saved, "%s: bind: %s", path, strerror(saved));
	}
	/* the umask gave it the mode unless a default ACL narrowed it: then set it
	   again, never through whatever may have been put at the path since the bind */
	rc = lstat(path, &st);
	if (rc == 0 && !S_ISSOCK(st.st_mode)) {
		errno = EEXIST;
		rc = -1;
	} else if (rc == 0 && (st.st_mode & 07777) != mode) {
		rc = fchmodat(AT_FDCWD, path, mode, AT_SYMLINK_NOFOLLOW);
	}
	if (rc < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		saved = errno;
		close(fd);
		unlink(path);
		return uraid_errf(err, errlen, -saved, "%s: %s", path, strerror(saved));
	}
	return fd;
}

int nbd_listen_tcp(const char *hostport, char *err, size_t errlen)
{
	char host[256];
	const char *colon = strrchr(hostport, ':');

	if (!colon || !colon[1])
		return uraid_errf(err, errlen, -EINVAL, "--listen=%s: expected HOST:PORT "
				  "(e.g. 127.0.0.1:10809)", hostport);
	size_t hl = (size_t)(colon - hostport);
	if (hl >= 2 && hostport[0] == '[' && hostport[hl - 1] == ']')
		hostport++, hl -= 2;            /* [v6]:port */
	if (hl >= sizeof(host))
		return uraid_errf(err, errlen, -EINVAL, "--listen: host name too long");
	memcpy(host, hostport, hl);
	host[hl] = 0;

	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *res;
	int g = getaddrinfo(hl ? host : NULL, colon + 1, &hints, &res);
	if (g)
		return uraid_errf(err, errlen, -EINVAL, "--listen=%s: %s", hostport,
				  gai_strerror(g));
	int fd = -1, saved = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, LISTEN_BACKLOG) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return uraid_errf(err, errlen, -saved, "--listen=%s: %s", hostport, strerror(saved));
	return fd;
}

int nbd_listen_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -EAFNOSUPPORT;
}

bool nbd_listen_loopback(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return false;
	if (ss.ss_family == AF_UNIX)
		return true;
	if (ss.ss_family == AF_INET)
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss.ss_family == AF_INET6) {
		const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}
