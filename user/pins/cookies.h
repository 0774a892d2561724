/* SPDX-License-Identifier: GPL-2.0 */
/* Whether this kernel can run --prove (bpf/prove.h), asked once. */
#ifndef SLUICE_PINS_COOKIES_H
#define SLUICE_PINS_COOKIES_H

#include <stdbool.h>
#include "policy/policy.h"

/* The SYN cookie helpers for XDP: Linux 6.0+ built with CONFIG_SYN_COOKIES. */
bool syn_cookies_supported(void);

/* -EOPNOTSUPP and *why when doc proves on a kernel that cannot, else 0. */
int prove_refusal(const struct policy_doc *doc, const char **why);

#endif /* SLUICE_PINS_COOKIES_H */
