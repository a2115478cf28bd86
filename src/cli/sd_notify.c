// SPDX-License-Identifier: MIT
/* sd_notify's datagram, written from its documented protocol (sd_notify.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/sd_notify.h"

int cli_sd_notify(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!name || !*name)
		return 0;
	size_t len = strlen(name);
	if ((name[0] != '/' && name[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = 0;     /* an abstract socket: no NUL at the end either */
	socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
				      (name[0] == '/' ? 1 : 0));
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ssize_t n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	int rc = n == (ssize_t)strlen(state) ? 1 : n < 0 ? -errno : -EMSGSIZE;
	close(fd);
	return rc;
}
