// SPDX-License-Identifier: GPL-2.0
/*
 * Small helpers shared by the other files: messages, escaping, sizes,
 * names, safe file reading and writing, tree removal.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "oci2ovl.h"

static void lfs_vmsg(const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", LFS_PROG, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void lfs_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lfs_vmsg("", fmt, ap);
	va_end(ap);
}

void lfs_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lfs_vmsg("warning: ", fmt, ap);
	va_end(ap);
}

/**
 * lfs_refuse() - report that an entry of a layer breaks a rule
 * @layer: the layer (blob digest), or NULL
 * @entry: the raw entry name, or NULL
 * @fmt: the rule
 *
 * Return: -LFS_EREFUSED, so that callers can "return lfs_refuse(...)".
 */
int lfs_refuse(const char *layer, const char *entry, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	fprintf(stderr, "%s: ", LFS_PROG);
	if (layer)
		fprintf(stderr, "layer %s: ", layer);
	if (entry)
		fprintf(stderr, "entry \"%s\": ",
			lfs_escape_name(entry, buf, sizeof(buf)));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -LFS_EREFUSED;
}

/**
 * lfs_escape_name() - make an untrusted name printable
 *
 * Printable ASCII stays, '"' and '\' get a backslash, any other byte is
 * written \xHH. Names longer than the buffer end in "...".
 */
char *lfs_escape_name(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = *s;

		if (o + 8 >= len) {
			strcpy(buf + o, "...");
			return buf;
		}
		if (c == '"' || c == '\\')
			o += sprintf(buf + o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			o += sprintf(buf + o, "\\x%02x", c);
		else
			buf[o++] = c;
	}
	buf[o] = '\0';
	return buf;
}

/* lfs_esc() results alive at once, and the room of each */
#define LFS_ESC_SLOTS 8
#define LFS_ESC_LEN 512

/**
 * lfs_esc() - an untrusted string (a path, media type, tag, annotation or
 * entry name), escaped for a message: "%s" with lfs_esc(s) in place of s
 *
 * Escaped as lfs_escape_name() does (printable ASCII stays, '"' and '\'
 * get a backslash, control characters and bytes >= 0x7f become \xHH), into
 * the next of LFS_ESC_SLOTS static buffers: one message may use up to that
 * many results. Longer strings are cut and end in "...". NULL prints as
 * "(null)".
 */
const char *lfs_esc(const char *s)
{
	static char slots[LFS_ESC_SLOTS][LFS_ESC_LEN];
	static unsigned int next;
	char *buf = slots[next++ % LFS_ESC_SLOTS];

	return lfs_escape_name(s ?: "(null)", buf, LFS_ESC_LEN);
}

/* "123", "4K", "16M", "2G", "1T" (powers of 1024) */
int lfs_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -errno;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	case 't':
	case 'T':
		shift = 40;
		end++;
		break;
	}
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

/* image names become file names: [A-Za-z0-9._:@+-], no leading '.' */
bool lfs_valid_image_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 128 || name[0] == '.' || name[0] == '-')
		return false;
	for (; *name; name++)
		if (!isalnum((unsigned char)*name) && !strchr("._:@+-", *name))
			return false;
	return true;
}

/* openat2(2) confined to @dirfd: no "..", no symlinks, no magic links */
int lfs_openat2(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC,
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	long fd;

	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	return fd < 0 ? -errno : (int)fd;
}

/*
 * lfs_rm_tree_at() - remove @name under @dirfd and everything below it
 *
 * Never follows a symlink and never crosses a mount. Missing is success.
 */
int lfs_rm_tree_at(int dirfd, const char *name)
{
	struct dirent *de;
	DIR *d;
	int fd, err = 0;

	if (!unlinkat(dirfd, name, 0) || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	fd = openat(dirfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		err = lfs_rm_tree_at(fd, de->d_name);
		if (err)
			break;
	}
	closedir(d);
	if (err)
		return err;
	if (unlinkat(dirfd, name, AT_REMOVEDIR) && errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * lfs_read_file_at() - read a whole regular file of at most @max bytes
 *
 * Refuses anything but a regular file (a fifo would block forever) and
 * anything larger than @max, with -EFBIG. The buffer is NUL-terminated.
 */
int lfs_read_file_at(int dirfd, const char *path, size_t max, char **buf,
		     size_t *len)
{
	struct stat stb;
	size_t got = 0;
	char *b;
	int fd, err;

	fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = -errno;
	if (fstat(fd, &stb))
		goto out_close;
	err = -EINVAL;
	if (!S_ISREG(stb.st_mode))
		goto out_close;
	err = -EFBIG;
	if ((uint64_t)stb.st_size > max)
		goto out_close;
	err = -ENOMEM;
	b = malloc(stb.st_size + 1);
	if (!b)
		goto out_close;
	while (got < (size_t)stb.st_size) {
		ssize_t r = read(fd, b + got, stb.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			free(b);
			goto out_close;
		}
		got += r;
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	err = 0;
out_close:
	close(fd);
	return err;
}

/* write all @len bytes of @data to @fd: 0, or -1 with errno set */
int lfs_write_full(int fd, const char *data, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t w = write(fd, data + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		done += w;
	}
	return 0;
}

/* write @name under @dirfd through a temporary file, fsync and rename */
int lfs_write_file_atomic(int dirfd, const char *name, const char *data,
			  size_t len)
{
	char tmp[PATH_MAX];
	int fd, err;

	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp.%d", (int)(base - name), name,
		 base, (int)getpid());
	fd = openat(dirfd, tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd < 0)
		return -errno;
	if (lfs_write_full(fd, data, len))
		goto out_unlink;
	if (fsync(fd))
		goto out_unlink;
	close(fd);
	if (renameat(dirfd, tmp, dirfd, name)) {
		err = -errno;
		unlinkat(dirfd, tmp, 0);
		return err;
	}
	return 0;
out_unlink:
	err = -errno;
	close(fd);
	unlinkat(dirfd, tmp, 0);
	return err;
}

/* quote @s for a POSIX shell when it needs it; the caller frees */
char *lfs_shell_quote(const char *s)
{
	size_t n = 2;
	const char *p;
	char *out, *o;

	if (*s &&
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		      "0123456789/._:=,+-@%") == strlen(s))
		return strdup(s);
	for (p = s; *p; p++)
		n += *p == '\'' ? 4 : 1;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	o = out;
	*o++ = '\'';
	for (p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *p;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

/*
 * lfs_setxattr_at() - set an xattr on @name under @dirfd, never following
 * @name if it is a symlink ("" means @dirfd itself)
 *
 * lsetxattr() through the directory's /proc/self/fd entry: that magic link
 * resolves to @dirfd's own directory, and only the plain name @name (no
 * '/') is looked up in it.
 */
int lfs_setxattr_at(int dirfd, const char *name, const char *key,
		    const void *val, size_t len)
{
	char p[64 + NAME_MAX + 2];

	if (!*name)
		return fsetxattr(dirfd, key, val, len, 0) ? -errno : 0;
	if (strchr(name, '/') || strlen(name) > NAME_MAX)
		return -EINVAL;
	snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", dirfd, name);
	return lsetxattr(p, key, val, len, 0) ? -errno : 0;
}

/*
 * lfs_fdopendir() - a DIR stream over @fd, which it takes: closed with
 * the stream, or at once if there is none. Return: the stream, or NULL
 * with errno set.
 */
DIR *lfs_fdopendir(int fd)
{
	int err;
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		err = errno;
		close(fd);
		errno = err;
	}
	return d;
}

/* a DIR stream over a dup of @dirfd, from its start (the caller keeps @dirfd) */
DIR *lfs_opendir_dup(int dirfd)
{
	DIR *d = lfs_fdopendir(dup(dirfd));

	if (d)
		rewinddir(d);
	return d;
}
