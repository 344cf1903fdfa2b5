/* sdnotify.c: see sdnotify.h. */
#include "sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int sdnotify_open(char *name, size_t size)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	/* binding a bare family asks the kernel for an abstract name */
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t len = sizeof(sa_family_t);
	int one = 1;
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
		goto fail;
	len = sizeof(sa);
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		goto fail;
	size_t n = len - offsetof(struct sockaddr_un, sun_path); /* with its leading NUL */
	if (len <= offsetof(struct sockaddr_un, sun_path) + 1 || n >= size) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	name[0] = '@';
	memcpy(name + 1, sa.sun_path + 1, n - 1);
	name[n] = '\0';
	return fd;
fail:;
	int e = errno;
	close(fd);
	errno = e;
	return -1;
}

ssize_t sdnotify_recv(int fd, char *buf, size_t size, pid_t *sender)
{
	union {
		struct cmsghdr align;
		char space[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct iovec iov = {buf, size - 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.space,
			     .msg_controllen = sizeof(ctl.space)};
	*sender = 0;
	ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred cred;
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
			*sender = cred.pid;
		}
	}
	return n;
}

const char *sdnotify_value(const char *msg, const char *name, size_t *len)
{
	size_t nl = strlen(name);
	for (const char *l = msg; l && *l;) {
		const char *end = strchr(l, '\n');
		size_t ll = end ? (size_t)(end - l) : strlen(l);
		if (ll > nl && strncmp(l, name, nl) == 0 && l[nl] == '=') {
			*len = ll - nl - 1;
			return l + nl + 1;
		}
		l = end ? end + 1 : NULL;
	}
	return NULL;
}

bool sdnotify_has(const char *msg, const char *assignment)
{
	const char *eq = strchr(assignment, '=');
	if (!eq)
		return false;
	char name[64];
	size_t nl = (size_t)(eq - assignment), len;
	if (nl >= sizeof(name))
		return false;
	memcpy(name, assignment, nl);
	name[nl] = '\0';
	const char *v = sdnotify_value(msg, name, &len);
	return v && len == strlen(eq + 1) && strncmp(v, eq + 1, len) == 0;
}
