// SPDX-License-Identifier: GPL-2.0
/* Whether this kernel can run --prove (cookies.h). */
#include <errno.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "pins/cookies.h"

/* Present only in a kernel built with CONFIG_SYN_COOKIES, whose helpers fail without it. */
#define SYN_COOKIES_SYSCTL "/proc/sys/net/ipv4/tcp_syncookies"

static bool helper_runs_in_xdp(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, id, NULL) == 1;
}

bool syn_cookies_supported(void)
{
	static int known = -1;

	if (known < 0)
		known = !access(SYN_COOKIES_SYSCTL, F_OK) &&
			helper_runs_in_xdp(BPF_FUNC_tcp_raw_gen_syncookie_ipv4) &&
			helper_runs_in_xdp(BPF_FUNC_tcp_raw_check_syncookie_ipv4) &&
			helper_runs_in_xdp(BPF_FUNC_tcp_raw_gen_syncookie_ipv6) &&
			helper_runs_in_xdp(BPF_FUNC_tcp_raw_check_syncookie_ipv6);
	return known;
}

int prove_refusal(const struct policy_doc *doc, const char **why)
{
	if (!doc_provers(doc) || syn_cookies_supported())
		return 0;
	*why = "--prove needs the SYN cookie helpers for XDP (Linux 6.0 or later, built with "
	       "CONFIG_SYN_COOKIES), and this kernel has none";
	return -EOPNOTSUPP;
}
