/* rtnl.c: rtnetlink requests built by hand: a header, the family's fixed
 * part, then attributes (some nested), each request answered by an ack. */
#include "rtnl.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#define RTNL_MSG_SIZE 1024 /* our requests are a few hundred bytes */

/* One request being built. */
struct rtnl__req {
	union {
		struct nlmsghdr h;
		char buf[RTNL_MSG_SIZE];
	} u;
};

static void rtnl__start(struct rtnl__req *r, uint16_t type, uint16_t flags, const void *fixed,
			size_t len)
{
	memset(r, 0, sizeof(*r));
	r->u.h.nlmsg_type = type;
	r->u.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	r->u.h.nlmsg_len = NLMSG_LENGTH(len);
	memcpy(NLMSG_DATA(&r->u.h), fixed, len);
}

/* Appends an attribute; its data (len bytes, or none) follows. */
static struct rtattr *rtnl__put(struct rtnl__req *r, uint16_t type, const void *data, size_t len)
{
	size_t at = NLMSG_ALIGN(r->u.h.nlmsg_len);
	if (at + RTA_SPACE(len) > sizeof(r->u.buf))
		abort(); /* the requests are ours and small: a bug */
	struct rtattr *a = (struct rtattr *)(r->u.buf + at);
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	r->u.h.nlmsg_len = (uint32_t)(at + RTA_SPACE(len));
	return a;
}

static void rtnl__put_str(struct rtnl__req *r, uint16_t type, const char *s)
{
	rtnl__put(r, type, s, strlen(s) + 1);
}

static void rtnl__put_u32(struct rtnl__req *r, uint16_t type, uint32_t v)
{
	rtnl__put(r, type, &v, sizeof(v));
}

static void rtnl__put_u8(struct rtnl__req *r, uint16_t type, uint8_t v)
{
	rtnl__put(r, type, &v, sizeof(v));
}

/* A nested attribute ends where the request ends now. */
static void rtnl__end(struct rtnl__req *r, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)(r->u.buf + r->u.h.nlmsg_len - (char *)nest);
}

/* Sends r and reads its ack: 0, or the kernel's -errno. A reply other
 * than the ack (RTM_GETLINK's) is copied to *reply when asked. */
static int rtnl__talk(int fd, struct rtnl__req *r, struct ifinfomsg *reply)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	if (sendto(fd, r->u.buf, r->u.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) <
	    0)
		return -errno;
	union {
		struct nlmsghdr h;
		char buf[8192];
	} in;
	for (;;) {
		ssize_t n = recv(fd, in.buf, sizeof(in.buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		size_t left = (size_t)n;
		for (struct nlmsghdr *h = &in.h; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				return e->error;
			}
			if (reply && h->nlmsg_type == RTM_NEWLINK &&
			    h->nlmsg_len >= NLMSG_LENGTH(sizeof(*reply)))
				memcpy(reply, NLMSG_DATA(h), sizeof(*reply));
		}
	}
}

int rtnl_open(pid_t pid, struct error **err)
{
	if (pid <= 0) {
		int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
		if (fd < 0)
			return error_set(err, errno, "netlink socket: %s", strerror(errno));
		return fd;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	int there = open(path, O_RDONLY | O_CLOEXEC);
	if (there < 0)
		return error_set(err, errno, "%s: %s", path, strerror(errno));
	int here = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (here < 0) {
		int e = errno;
		close(there);
		return error_set(err, e, "/proc/thread-self/ns/net: %s", strerror(e));
	}
	int fd = -1, e = 0;
	if (setns(there, CLONE_NEWNET) < 0) {
		e = errno;
	} else {
		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
		e = errno;
		/* a thread left in a pod's namespace would make every later
		 * link there: no way on */
		if (setns(here, CLONE_NEWNET) < 0)
			abort();
	}
	close(there);
	close(here);
	if (fd < 0)
		return error_set(err, e, "netlink socket in the namespace of %d: %s", (int)pid,
				 strerror(e));
	return fd;
}

/* The index of link name, or a negative errno. */
static int rtnl__index(int fd, const char *name)
{
	struct rtnl__req r;
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
	rtnl__start(&r, RTM_GETLINK, 0, &ifi, sizeof(ifi));
	rtnl__put_str(&r, IFLA_IFNAME, name);
	struct ifinfomsg got = {0};
	int e = rtnl__talk(fd, &r, &got);
	if (e < 0)
		return e;
	return got.ifi_index > 0 ? got.ifi_index : -ENODEV;
}

int rtnl_veth_add(int fd, const char *name, const char *master, const char *peer, pid_t peer_ns,
		  struct error **err)
{
	int bridge = rtnl__index(fd, master);
	if (bridge < 0)
		return error_set(err, -bridge, "%s: %s", master, strerror(-bridge));
	struct rtnl__req r;
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
	rtnl__start(&r, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof(ifi));
	rtnl__put_str(&r, IFLA_IFNAME, name);
	rtnl__put_u32(&r, IFLA_MASTER, (uint32_t)bridge);
	struct rtattr *info = rtnl__put(&r, IFLA_LINKINFO, NULL, 0);
	rtnl__put_str(&r, IFLA_INFO_KIND, "veth");
	struct rtattr *data = rtnl__put(&r, IFLA_INFO_DATA, NULL, 0);
	struct rtattr *other = rtnl__put(&r, VETH_INFO_PEER, &ifi, sizeof(ifi));
	rtnl__put_str(&r, IFLA_IFNAME, peer);
	rtnl__put_u32(&r, IFLA_NET_NS_PID, (uint32_t)peer_ns);
	rtnl__end(&r, other);
	rtnl__end(&r, data);
	rtnl__end(&r, info);
	int e = rtnl__talk(fd, &r, NULL);
	if (e < 0)
		return error_set(err, -e, "veth %s: %s", name, strerror(-e));
	return 0;
}

int rtnl_link_set(int fd, const char *name, const struct rtnl_link_change *c, struct error **err)
{
	struct rtnl__req r;
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
	if (c->up) {
		ifi.ifi_flags = IFF_UP;
		ifi.ifi_change = IFF_UP;
	}
	/* RTM_NEWLINK on a link that exists: the one that also changes a
	 * bridge port's settings (RTM_SETLINK does not) */
	rtnl__start(&r, RTM_NEWLINK, 0, &ifi, sizeof(ifi));
	rtnl__put_str(&r, IFLA_IFNAME, name);
	if (c->bridge_hairpin) {
		struct rtattr *info = rtnl__put(&r, IFLA_LINKINFO, NULL, 0);
		rtnl__put_str(&r, IFLA_INFO_SLAVE_KIND, "bridge");
		struct rtattr *data = rtnl__put(&r, IFLA_INFO_SLAVE_DATA, NULL, 0);
		rtnl__put_u8(&r, IFLA_BRPORT_MODE, 1);
		rtnl__end(&r, data);
		rtnl__end(&r, info);
	}
	int e = rtnl__talk(fd, &r, NULL);
	if (e < 0)
		return error_set(err, -e, "link %s: %s", name, strerror(-e));
	return 0;
}

int rtnl_link_del(int fd, const char *name, struct error **err)
{
	struct rtnl__req r;
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
	rtnl__start(&r, RTM_DELLINK, 0, &ifi, sizeof(ifi));
	rtnl__put_str(&r, IFLA_IFNAME, name);
	int e = rtnl__talk(fd, &r, NULL);
	if (e == -ENODEV)
		return e;
	if (e < 0)
		return error_set(err, -e, "deleting link %s: %s", name, strerror(-e));
	return 0;
}

int rtnl_addr_add(int fd, const char *dev, uint32_t addr, unsigned prefix, struct error **err)
{
	int index = rtnl__index(fd, dev);
	if (index < 0)
		return error_set(err, -index, "%s: %s", dev, strerror(-index));
	struct rtnl__req r;
	struct ifaddrmsg ifa = {
	    .ifa_family = AF_INET,
	    .ifa_prefixlen = (unsigned char)prefix,
	    .ifa_scope = RT_SCOPE_UNIVERSE,
	    .ifa_index = (unsigned)index,
	};
	rtnl__start(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, sizeof(ifa));
	rtnl__put_u32(&r, IFA_LOCAL, addr);
	rtnl__put_u32(&r, IFA_ADDRESS, addr);
	int e = rtnl__talk(fd, &r, NULL);
	if (e < 0)
		return error_set(err, -e, "address on %s: %s", dev, strerror(-e));
	return 0;
}

int rtnl_route_default(int fd, uint32_t gateway, struct error **err)
{
	struct rtnl__req r;
	struct rtmsg rt = {
	    .rtm_family = AF_INET,
	    .rtm_table = RT_TABLE_MAIN,
	    .rtm_protocol = RTPROT_BOOT,
	    .rtm_scope = RT_SCOPE_UNIVERSE,
	    .rtm_type = RTN_UNICAST,
	};
	rtnl__start(&r, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, &rt, sizeof(rt));
	rtnl__put_u32(&r, RTA_GATEWAY, gateway);
	int e = rtnl__talk(fd, &r, NULL);
	if (e < 0)
		return error_set(err, -e, "default route: %s", strerror(-e));
	return 0;
}
