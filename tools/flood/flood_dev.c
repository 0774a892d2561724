// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-flood: the sending device. Only veth and loopback unless forced,
 * up with carrier, and able to take XDP_TX frames right now.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sockios.h>

#include "flood_opts.h"

/*
 * Not in Debian 12's UAPI headers (netdev genetlink family, Linux 6.3+);
 * values from include/uapi/linux/netdev.h.
 */
#define NETDEV_FAMILY_NAME	  "netdev"
#define NETDEV_CMD_DEV_GET	  1
#define NETDEV_A_DEV_IFINDEX	  1
#define NETDEV_A_DEV_XDP_FEATURES 3
#define NETDEV_XDP_ACT_NDO_XMIT	  4

/*
 * Reads the interface flags and driver name, and whether it is one we may
 * flood without --force: loopback, or a device whose driver is veth.
 */
static int probe_device(int fd, struct ifreq *ifr, short *flags, char *driver, bool *safe)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };

	if (ioctl(fd, SIOCGIFFLAGS, ifr) < 0)
		return -errno;
	*flags = ifr->ifr_flags;
	if (*flags & IFF_LOOPBACK) {
		*safe = true;
		return 0;
	}
	ifr->ifr_data = (void *)&info;
	/* Drivers without ethtool support are not veth, so not safe. */
	if (ioctl(fd, SIOCETHTOOL, ifr) == 0)
		snprintf(driver, sizeof(info.driver), "%s", info.driver);
	*safe = strcmp(driver, "veth") == 0;
	return 0;
}

int flood_setup_device(struct flood_opts *o)
{
	char driver[32] = "unknown";
	struct ifreq ifr = {};
	bool safe = false;
	short flags = 0;
	int fd, err, ret = EXIT_RUNTIME;

	o->ifindex = if_nametoindex(o->ifname);
	if (!o->ifindex || strlen(o->ifname) >= IFNAMSIZ) {
		fprintf(stderr, PROG ": unknown interface '%s'\n", o->ifname);
		return EXIT_USAGE;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, PROG ": socket: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}
	strcpy(ifr.ifr_name, o->ifname);
	err = probe_device(fd, &ifr, &flags, driver, &safe);
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", o->ifname, strerror(-err));
		goto out;
	}
	if (!safe && !o->force) {
		/* A mistyped name must not flood a real network. */
		fprintf(stderr,
			PROG ": refusing to flood '%s' (driver %s): only veth and loopback "
			     "devices are flooded without --force, so that a wrong name cannot "
			     "flood a real network\n",
			o->ifname, driver);
		ret = EXIT_USAGE;
		goto out;
	}
	/* Frames sent to a device that is down are dropped without a trace. */
	if (!(flags & IFF_UP) || !(flags & IFF_RUNNING)) {
		fprintf(stderr, PROG ": %s is down or has no carrier (a veth needs both ends up)\n",
			o->ifname);
		goto out;
	}
	if (!o->have_src_mac) {
		if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
			fprintf(stderr, PROG ": %s: reading MAC address: %s\n", o->ifname,
				strerror(errno));
			goto out;
		}
		memcpy(o->src_mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	}
	ret = 0;
out:
	close(fd);
	return ret;
}

/* One request, one reply; returns the reply length or a negative errno. */
static int genl_call(int fd, __u16 family, __u8 cmd, __u16 attr, const void *val, __u16 len,
		     char *reply, size_t reply_len)
{
	struct {
		struct nlmsghdr nh;
		struct genlmsghdr gh;
		char attrs[64];
	} req = {};
	struct nlattr *nla = (struct nlattr *)req.attrs;
	struct nlmsghdr *nh = (struct nlmsghdr *)reply;
	ssize_t n;

	nla->nla_type = attr;
	nla->nla_len = NLA_HDRLEN + len;
	memcpy(req.attrs + NLA_HDRLEN, val, len);
	req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + NLA_ALIGN(nla->nla_len));
	req.nh.nlmsg_type = family;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.gh.cmd = cmd;
	req.gh.version = 1;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, reply, reply_len, 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(nh, (size_t)n))
		return -EBADMSG;
	if (nh->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(nh))->error ?: -EBADMSG;
	return n;
}

/* Copies attribute TYPE of a genetlink reply into VAL; -ENOENT if absent. */
static int genl_attr(const char *reply, __u16 type, void *val, size_t len)
{
	const struct nlmsghdr *nh = (const struct nlmsghdr *)reply;
	const char *p = (const char *)NLMSG_DATA(nh) + GENL_HDRLEN;
	const char *end = reply + nh->nlmsg_len;
	const struct nlattr *nla;

	while (p + NLA_HDRLEN <= end) {
		nla = (const struct nlattr *)p;
		if (nla->nla_len < NLA_HDRLEN || p + nla->nla_len > end)
			break;
		if ((nla->nla_type & NLA_TYPE_MASK) == type) {
			if ((size_t)(nla->nla_len - NLA_HDRLEN) < len)
				return -EBADMSG;
			memcpy(val, p + NLA_HDRLEN, len); /* u64s may be 4-byte aligned */
			return 0;
		}
		p += NLA_ALIGN(nla->nla_len);
	}
	return -ENOENT;
}

/*
 * XDP_TX from a live test run ends in the device's ndo_xdp_xmit.  A veth only
 * offers that while its peer has NAPI enabled; otherwise every frame is
 * dropped after the program has counted it as sent.  Ask the netdev
 * genetlink family (Linux 6.3+) for the device's XDP features.
 * Returns 1 if redirected frames are accepted, 0 if not, negative errno if
 * the kernel cannot tell.
 */
int flood_xdp_xmit_supported(int ifindex)
{
	char reply[8192];
	__u16 family;
	__u64 features;
	__u32 idx = ifindex;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	err = genl_call(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME,
			NETDEV_FAMILY_NAME, sizeof(NETDEV_FAMILY_NAME), reply, sizeof(reply));
	if (err < 0)
		goto out;
	err = genl_attr(reply, CTRL_ATTR_FAMILY_ID, &family, sizeof(family));
	if (err)
		goto out;
	err = genl_call(fd, family, NETDEV_CMD_DEV_GET, NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx),
			reply, sizeof(reply));
	if (err < 0)
		goto out;
	err = genl_attr(reply, NETDEV_A_DEV_XDP_FEATURES, &features, sizeof(features));
	if (err)
		goto out;
	err = !!(features & NETDEV_XDP_ACT_NDO_XMIT);
out:
	close(fd);
	return err;
}

/* The device's tx_dropped counter, where veth counts frames its peer refused. */
__u64 flood_tx_dropped(const char *ifname)
{
	unsigned long long v = 0;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_dropped", ifname);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}
