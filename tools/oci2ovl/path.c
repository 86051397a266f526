// SPDX-License-Identifier: GPL-2.0
/*
 * Entry path rules. A tar entry name is untrusted; before it touches the
 * filesystem it is normalised here, lexically:
 *
 *  - leading "/" is dropped: absolute names are taken relative to the layer
 *    root, as GNU tar, umoci and containerd do;
 *  - empty and "." components are dropped ("./a//b/" is "a/b");
 *  - a ".." component anywhere is refused ("path leaves the layer"), even
 *    one that would stay inside ("a/../b"): a layer has no reason for it;
 *  - a component longer than NAME_MAX, or a result longer than --max-path,
 *    is refused.
 *
 * The empty result is the layer root. Symlinks are dealt with at
 * resolution time (extract.c), never here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "oci2ovl.h"

/**
 * lfs_path_normalize() - normalise a tar entry name
 * @in: the raw name
 * @lim: the limits (max_path)
 * @out: the normalised name, allocated, no leading or trailing '/'
 * @rule: on refusal, the rule broken
 *
 * Return: 0, -LFS_EREFUSED with @rule set, or -ENOMEM.
 */
int lfs_path_normalize(const char *in, const struct lfs_limits *lim, char **out,
		       const char **rule)
{
	size_t inlen = strlen(in), o = 0;
	const char *p = in;
	char *buf;

	if (inlen > lim->max_path + 2 * (size_t)PATH_MAX) {
		*rule = "path too long";
		return -LFS_EREFUSED;
	}
	buf = malloc(inlen + 1);
	if (!buf)
		return -ENOMEM;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.')) {
			p += n + (p[n] == '/');
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			*rule = "path leaves the layer";
			goto refuse;
		}
		if (n > NAME_MAX) {
			*rule = "name too long";
			goto refuse;
		}
		if (o)
			buf[o++] = '/';
		memcpy(buf + o, p, n);
		o += n;
		p += n + (p[n] == '/');
	}
	buf[o] = '\0';
	if (o > lim->max_path) {
		*rule = "path too long";
		goto refuse;
	}
	*out = buf;
	return 0;
refuse:
	free(buf);
	return -LFS_EREFUSED;
}
