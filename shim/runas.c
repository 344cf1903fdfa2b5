/* runas.c: corral-runas, the first process of a container whose security
 * context sets its user, group or supplementary groups (systemd-nspawn's
 * --user wants a name in the image's user database; Kubernetes takes any
 * number, and most images have no such user).
 *
 *   corral-runas UID GID GROUPS CAPS [NAME=VALUE]... -- COMMAND [ARG]...
 *
 * GROUPS is a comma-separated list of group ids or "-" for none, CAPS the
 * capability set the container keeps as a hexadecimal mask. Each
 * NAME=VALUE is set in the environment: the variables whose names
 * systemd-nspawn's --setenv refuses (Kubernetes allows dots and dashes,
 * "special.how"), so corral-noded starts such a container through
 * corral-runas even when its ids are root's. It runs inside
 * the container, so it is linked statically (an image has any libc, or
 * none), as root with the capabilities systemd-nspawn left it: CAPS plus
 * CAP_SETUID, CAP_SETGID and CAP_SETPCAP, which it needs itself. It drops
 * from the bounding set every capability CAPS does not hold, sets the
 * groups and ids, keeps CAPS of what it still has (nothing for a user other
 * than 0: the kernel clears a process's capabilities when it leaves uid 0),
 * then executes COMMAND through PATH. Any failure ends it with 127 and a
 * line on standard error, which is the container's log.
 *
 * It must never do more than that: it is exposed to the container's files
 * and environment, and trusts none of them. */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RUNAS_GROUPS_MAX 65536 /* the kernel's NGROUPS_MAX */

static void die(const char *what)
{
	fprintf(stderr, "corral-runas: %s: %s\n", what, strerror(errno));
	exit(127);
}

static long long number(const char *s, const char *what)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > UINT32_MAX - 1) {
		fprintf(stderr, "corral-runas: %s: not an id: %s\n", what, s);
		exit(127);
	}
	return v;
}

static size_t parse_groups(char *list, gid_t *out)
{
	size_t n = 0;
	if (strcmp(list, "-") == 0)
		return 0;
	for (char *save, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == RUNAS_GROUPS_MAX) {
			fprintf(stderr, "corral-runas: more than %d groups\n", RUNAS_GROUPS_MAX);
			exit(127);
		}
		out[n++] = (gid_t)number(t, "group");
	}
	return n;
}

/* Keeps the capabilities of mask the process still has, nothing else. */
static void keep_caps(uint64_t mask)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		die("capget");
	for (int i = 0; i < 2; i++) {
		uint32_t m = (uint32_t)(mask >> (32 * i));
		d[i].permitted &= m;
		d[i].effective = d[i].permitted;
		d[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &h, d) < 0)
		die("capset");
}

int main(int argc, char **argv)
{
	int cmd = 5;
	while (cmd < argc && strcmp(argv[cmd], "--") != 0)
		cmd++;
	if (argc < 7 || cmd + 1 >= argc) {
		fprintf(stderr,
			"usage: corral-runas UID GID GROUPS CAPS [NAME=VALUE]... -- COMMAND "
			"[ARG]...\n");
		return 127;
	}
	for (int i = 5; i < cmd; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq || eq == argv[i]) {
			fprintf(stderr, "corral-runas: not NAME=VALUE: %s\n", argv[i]);
			return 127;
		}
		*eq = '\0';
		if (setenv(argv[i], eq + 1, 1) < 0)
			die("setenv");
	}
	uid_t uid = (uid_t)number(argv[1], "user");
	gid_t gid = (gid_t)number(argv[2], "group");
	static gid_t groups[RUNAS_GROUPS_MAX];
	size_t ngroups = parse_groups(argv[3], groups);
	char *end;
	errno = 0;
	uint64_t mask = strtoull(argv[4], &end, 16);
	if (errno || end == argv[4] || *end) {
		fprintf(stderr, "corral-runas: not a capability mask: %s\n", argv[4]);
		return 127;
	}
	for (int cap = 0; cap < 64; cap++) {
		if (mask & (UINT64_C(1) << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break; /* beyond the kernel's last capability */
			die("dropping a capability from the bounding set");
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		die("clearing the ambient capabilities");
	if (setgroups(ngroups, groups) < 0)
		die("setgroups");
	if (setresgid(gid, gid, gid) < 0)
		die("setresgid");
	if (setresuid(uid, uid, uid) < 0)
		die("setresuid");
	keep_caps(mask);
	execvp(argv[cmd + 1], argv + cmd + 1);
	fprintf(stderr, "corral-runas: %s: %s\n", argv[cmd + 1], strerror(errno));
	return 127;
}
