/* rtnl.c: the rtnetlink requests of rtnl.h, built and read with libmnl:
 * a header, the family's fixed part, then attributes (some nested), each
 * request answered by an ack that mnl_cb_run() turns into 0 or an errno. */
#include "rtnl.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

/* Our requests are a few hundred bytes; the kernel's answer to
 * RTM_GETLINK (a bridge's attributes) is a few thousand. */
#define RTNL_BUF_SIZE 8192

/* One request being built, then its answers read, in buf. */
struct rtnl__req {
	struct nlmsghdr *nlh;
	char buf[RTNL_BUF_SIZE] __attribute__((aligned(NLMSG_ALIGNTO)));
};

/* The requests are ours and small: one that outgrows the buffer is a bug. */
static void rtnl__fits(bool ok)
{
	if (!ok)
		abort();
}

/* Room for len more bytes of fixed header (the family's, or a nested
 * one), zeroed then copied from fixed. */
static void rtnl__fixed(struct rtnl__req *r, const void *fixed, size_t len)
{
	rtnl__fits(r->nlh->nlmsg_len + MNL_ALIGN(len) <= sizeof(r->buf));
	memcpy(mnl_nlmsg_put_extra_header(r->nlh, len), fixed, len);
}

static void rtnl__start(struct rtnl__req *r, uint16_t type, uint16_t flags, const void *fixed,
			size_t len)
{
	r->nlh = mnl_nlmsg_put_header(r->buf);
	r->nlh->nlmsg_type = type;
	r->nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	r->nlh->nlmsg_seq = (uint32_t)time(NULL);
	rtnl__fixed(r, fixed, len);
}

static void rtnl__put_str(struct rtnl__req *r, uint16_t type, const char *s)
{
	rtnl__fits(mnl_attr_put_strz_check(r->nlh, sizeof(r->buf), type, s));
}

static void rtnl__put_u32(struct rtnl__req *r, uint16_t type, uint32_t v)
{
	rtnl__fits(mnl_attr_put_u32_check(r->nlh, sizeof(r->buf), type, v));
}

static void rtnl__put_u8(struct rtnl__req *r, uint16_t type, uint8_t v)
{
	rtnl__fits(mnl_attr_put_u8_check(r->nlh, sizeof(r->buf), type, v));
}

/* A nested attribute; mnl_attr_nest_end() closes it where the request
 * ends then. */
static struct nlattr *rtnl__nest(struct rtnl__req *r, uint16_t type)
{
	struct nlattr *nest = mnl_attr_nest_start_check(r->nlh, sizeof(r->buf), type);
	rtnl__fits(nest != NULL);
	return nest;
}

static void rtnl__mnl_closep(struct mnl_socket **nl)
{
	if (*nl)
		mnl_socket_close(*nl);
}

#define cleanup_mnl __attribute__((cleanup(rtnl__mnl_closep)))

/* Sends r on nl and reads until its ack: 0, or the kernel's -errno.
 * Answers before the ack (RTM_GETLINK's) go to on_reply, when given. */
static int rtnl__talk(struct mnl_socket *nl, struct rtnl__req *r, mnl_cb_t on_reply, void *data)
{
	uint32_t seq = r->nlh->nlmsg_seq;
	if (mnl_socket_sendto(nl, r->nlh, r->nlh->nlmsg_len) < 0)
		return -errno;
	unsigned portid = mnl_socket_get_portid(nl);
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, r->buf, sizeof(r->buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		int done = mnl_cb_run(r->buf, (size_t)n, seq, portid, on_reply, data);
		if (done == MNL_CB_ERROR)
			return errno ? -errno : -EPROTO;
		if (done == MNL_CB_STOP)
			return 0;
	}
}

struct mnl_socket *rtnl_open(pid_t pid, struct error **err)
{
	cleanup_close int there = -1;
	cleanup_close int here = -1;
	char path[64];
	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
		there = open(path, O_RDONLY | O_CLOEXEC);
		if (there < 0)
			return error_set(err, errno, "%s: %s", path, strerror(errno)), NULL;
		here = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (here < 0)
			return error_set(err, errno, "/proc/thread-self/ns/net: %s",
					 strerror(errno)),
			       NULL;
	}
	cleanup_mnl struct mnl_socket *nl = NULL;
	int e = 0;
	if (there >= 0 && setns(there, CLONE_NEWNET) < 0) {
		e = errno;
	} else {
		/* a netlink socket belongs to the namespace it was made in */
		nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
		e = errno;
		/* a thread left in a pod's namespace would make every later
		 * link there: no way on */
		if (here >= 0 && setns(here, CLONE_NEWNET) < 0)
			abort();
	}
	if (!nl && pid > 0)
		return error_set(err, e, "netlink socket in the namespace of %d: %s", (int)pid,
				 strerror(e)),
		       NULL;
	if (!nl)
		return error_set(err, e, "netlink socket: %s", strerror(e)), NULL;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return error_set(err, errno, "netlink socket: bind: %s", strerror(errno)), NULL;
	return steal_pointer(&nl);
}

void rtnl_close(struct mnl_socket *nl)
{
	if (nl)
		mnl_socket_close(nl);
}

/* RTM_GETLINK's answer: the link's index into *data. */
static int rtnl__on_link(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == RTM_NEWLINK &&
	    nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct ifinfomsg))) {
		const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
		*(int *)data = ifi->ifi_index;
	}
	return MNL_CB_OK;
}

/* The index of link name, or a negative errno. */
static int rtnl__index(struct mnl_socket *nl, const char *name)
{
	struct rtnl__req r;
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
	rtnl__start(&r, RTM_GETLINK, 0, &ifi, sizeof(ifi));
	rtnl__put_str(&r, IFLA_IFNAME, name);
	int index = 0;
	int e = rtnl__talk(nl, &r, rtnl__on_link, &index);
	if (e < 0)
		return e;
	return index > 0 ? index : -ENODEV;
}

int rtnl_veth_add(struct mnl_socket *nl, const char *name, const char *master, const char *peer,
		  pid_t peer_ns, struct error **err)
{
	int bridge = rtnl__index(nl, master);
	if (bridge < 0)
		return error_set(err, -bridge, "%s: %s", master, strerror(-bridge));
	struct rtnl__req r;
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
	rtnl__start(&r, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof(ifi));
	rtnl__put_str(&r, IFLA_IFNAME, name);
	rtnl__put_u32(&r, IFLA_MASTER, (uint32_t)bridge);
	struct nlattr *info = rtnl__nest(&r, IFLA_LINKINFO);
	rtnl__put_str(&r, IFLA_INFO_KIND, "veth");
	struct nlattr *data = rtnl__nest(&r, IFLA_INFO_DATA);
	/* the peer: a link message of its own, fixed part and attributes */
	struct nlattr *other = rtnl__nest(&r, VETH_INFO_PEER);
	rtnl__fixed(&r, &ifi, sizeof(ifi));
	rtnl__put_str(&r, IFLA_IFNAME, peer);
	rtnl__put_u32(&r, IFLA_NET_NS_PID, (uint32_t)peer_ns);
	mnl_attr_nest_end(r.nlh, other);
	mnl_attr_nest_end(r.nlh, data);
	mnl_attr_nest_end(r.nlh, info);
	int e = rtnl__talk(nl, &r, NULL, NULL);
	if (e < 0)
		return error_set(err, -e, "veth %s: %s", name, strerror(-e));
	return 0;
}

int rtnl_link_set(struct mnl_socket *nl, const char *name, const struct rtnl_link_change *c,
		  struct error **err)
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
		struct nlattr *info = rtnl__nest(&r, IFLA_LINKINFO);
		rtnl__put_str(&r, IFLA_INFO_SLAVE_KIND, "bridge");
		struct nlattr *data = rtnl__nest(&r, IFLA_INFO_SLAVE_DATA);
		rtnl__put_u8(&r, IFLA_BRPORT_MODE, 1);
		mnl_attr_nest_end(r.nlh, data);
		mnl_attr_nest_end(r.nlh, info);
	}
	int e = rtnl__talk(nl, &r, NULL, NULL);
	if (e < 0)
		return error_set(err, -e, "link %s: %s", name, strerror(-e));
	return 0;
}

int rtnl_link_del(struct mnl_socket *nl, const char *name, struct error **err)
{
	struct rtnl__req r;
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
	rtnl__start(&r, RTM_DELLINK, 0, &ifi, sizeof(ifi));
	rtnl__put_str(&r, IFLA_IFNAME, name);
	int e = rtnl__talk(nl, &r, NULL, NULL);
	if (e == -ENODEV)
		return e;
	if (e < 0)
		return error_set(err, -e, "deleting link %s: %s", name, strerror(-e));
	return 0;
}

int rtnl_addr_add(struct mnl_socket *nl, const char *dev, uint32_t addr, unsigned prefix,
		  struct error **err)
{
	int index = rtnl__index(nl, dev);
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
	int e = rtnl__talk(nl, &r, NULL, NULL);
	if (e < 0)
		return error_set(err, -e, "address on %s: %s", dev, strerror(-e));
	return 0;
}

int rtnl_route_default(struct mnl_socket *nl, uint32_t gateway, struct error **err)
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
	int e = rtnl__talk(nl, &r, NULL, NULL);
	if (e < 0)
		return error_set(err, -e, "default route: %s", strerror(-e));
	return 0;
}
