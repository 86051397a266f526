// SPDX-License-Identifier: GPL-2.0
/*
 * lfs-fuse: serve one directory read-only over FUSE, for the tests of
 * layers on filesystems that revalidate their dentries.
 *
 *   lfs-fuse [-f] DIR MNT
 *
 * Mounts "fuse" at MNT with mount(2) and answers the kernel on /dev/fuse
 * itself (no libfuse): INIT, LOOKUP, FORGET, BATCH_FORGET, GETATTR, OPEN,
 * OPENDIR, READ, READDIR, RELEASE, RELEASEDIR, STATFS, GETXATTR,
 * LISTXATTR and READLINK; ENOSYS for the rest.  Without -f it returns
 * once mounted and serves in the background until MNT is unmounted; -f
 * serves in the foreground with messages on stderr.
 *
 * Entries and attributes are valid for no time, so the kernel asks again
 * at every walk through a name.  An object's node id is its inode number
 * in DIR plus one (the root is 1): a name whose object is replaced by
 * another inode gets a new node id, and the kernel then calls the dentry
 * it has for the name stale.  A node keeps an O_PATH descriptor of its
 * object, so an old node still reads the object it was looked up as, as
 * long as the kernel holds it.  Objects on another filesystem than DIR
 * (mount points inside it) are refused with EXDEV: inode numbers name
 * objects of one filesystem only.  Extended attributes of symbolic links
 * read as absent.
 *
 * If the server dies, the kernel aborts the connection when the last
 * descriptor of /dev/fuse closes: accesses fail with ENOTCONN, and MNT
 * can still be unmounted.  Nothing hangs on a dead server.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fuse.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/xattr.h>

/* largest write the kernel may send; the read buffer must hold one */
#define LFS_FUSE_MAX_WRITE	(128 * 1024)
#define LFS_FUSE_BUF		(LFS_FUSE_MAX_WRITE + 4096)
/* largest reply this server makes: a READ or READDIR of max_pages */
#define LFS_FUSE_MAX_REPLY	(256 * 1024)

/* One object the kernel has looked up, by node id. */
struct lfs_node {
	uint64_t nodeid;	/* inode number + 1; FUSE_ROOT_ID for DIR */
	uint64_t nlookup;	/* lookups not yet forgotten */
	int fd;			/* O_PATH descriptor of the object */
};

static struct lfs_node *nodes;
static size_t nr_nodes, cap_nodes;
static dev_t root_dev;
static ino_t root_ino;
static bool foreground;
static char reply_buf[LFS_FUSE_MAX_REPLY];

static void lfs_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void lfs_msg(const char *fmt, ...)
{
	va_list ap;

	if (!foreground)
		return;
	va_start(ap, fmt);
	fputs("lfs-fuse: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* linear search: the test trees have a handful of objects */
static struct lfs_node *lfs_node_find(uint64_t nodeid)
{
	size_t i;

	for (i = 0; i < nr_nodes; i++)
		if (nodes[i].nodeid == nodeid)
			return &nodes[i];
	return NULL;
}

static uint64_t lfs_nodeid(const struct stat *st)
{
	if (st->st_ino == root_ino)
		return FUSE_ROOT_ID;
	return (uint64_t)st->st_ino + 1;
}

/* Count one lookup of the object behind @fd (taken over or closed). */
static int lfs_node_add(int fd, const struct stat *st)
{
	uint64_t nodeid = lfs_nodeid(st);
	struct lfs_node *node = lfs_node_find(nodeid);

	if (node) {
		node->nlookup++;
		close(fd);
		return 0;
	}
	if (nr_nodes == cap_nodes) {
		size_t cap = cap_nodes ? 2 * cap_nodes : 64;
		struct lfs_node *n = realloc(nodes, cap * sizeof(*n));

		if (!n) {
			close(fd);
			return -ENOMEM;
		}
		nodes = n;
		cap_nodes = cap;
	}
	nodes[nr_nodes].nodeid = nodeid;
	nodes[nr_nodes].nlookup = 1;
	nodes[nr_nodes].fd = fd;
	nr_nodes++;
	return 0;
}

static void lfs_node_forget(uint64_t nodeid, uint64_t nlookup)
{
	struct lfs_node *node = lfs_node_find(nodeid);

	if (!node || nodeid == FUSE_ROOT_ID)
		return;
	if (node->nlookup > nlookup) {
		node->nlookup -= nlookup;
		return;
	}
	close(node->fd);
	*node = nodes[--nr_nodes];
}

static void lfs_fill_attr(struct fuse_attr *a, const struct stat *st)
{
	memset(a, 0, sizeof(*a));
	a->ino = st->st_ino;
	a->size = st->st_size;
	a->blocks = st->st_blocks;
	a->atime = st->st_atim.tv_sec;
	a->atimensec = st->st_atim.tv_nsec;
	a->mtime = st->st_mtim.tv_sec;
	a->mtimensec = st->st_mtim.tv_nsec;
	a->ctime = st->st_ctim.tv_sec;
	a->ctimensec = st->st_ctim.tv_nsec;
	a->mode = st->st_mode;
	a->nlink = st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->rdev = st->st_rdev;
	a->blksize = st->st_blksize;
}

/* the object itself through /proc, for what O_PATH cannot do */
static void lfs_proc_path(int fd, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/self/fd/%d", fd);
}

/* Send a reply: @err a negative errno or 0, then @len bytes of @data. */
static int lfs_reply(int dev, uint64_t unique, int err, const void *data,
		     size_t len)
{
	struct fuse_out_header out = {
		.len = sizeof(out) + (err ? 0 : len),
		.error = err,
		.unique = unique,
	};
	struct iovec iov[2] = {
		{ .iov_base = &out, .iov_len = sizeof(out) },
		{ .iov_base = (void *)data, .iov_len = len },
	};

	/* ENOENT: the request was interrupted meanwhile; nothing to do */
	if (writev(dev, iov, err || !len ? 1 : 2) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int lfs_do_init(int dev, const struct fuse_in_header *h,
		       const struct fuse_init_in *in)
{
	struct fuse_init_out out = {
		.major = FUSE_KERNEL_VERSION,
		.minor = FUSE_KERNEL_MINOR_VERSION,
		.max_readahead = in->max_readahead,
		.max_background = 16,
		.congestion_threshold = 12,
		.max_write = LFS_FUSE_MAX_WRITE,
		.time_gran = 1,
	};

	if (in->major != FUSE_KERNEL_VERSION) {
		lfs_msg("kernel speaks FUSE %u.%u, this server %u.%u",
			in->major, in->minor, FUSE_KERNEL_VERSION,
			FUSE_KERNEL_MINOR_VERSION);
		return lfs_reply(dev, h->unique, -EPROTO, NULL, 0);
	}
	if (in->minor < out.minor)
		out.minor = in->minor;
	return lfs_reply(dev, h->unique, 0, &out, sizeof(out));
}

/* LOOKUP: a name in a directory node; the answer is valid for no time */
static int lfs_do_lookup(const struct fuse_in_header *h, const char *name,
			 struct fuse_entry_out *out)
{
	struct lfs_node *dir = lfs_node_find(h->nodeid);
	struct stat st;
	int fd, err;

	if (!dir)
		return -ESTALE;
	fd = openat(dir->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (st.st_dev != root_dev) {
		close(fd);
		return -EXDEV;
	}
	memset(out, 0, sizeof(*out));
	out->nodeid = lfs_nodeid(&st);
	lfs_fill_attr(&out->attr, &st);
	return lfs_node_add(fd, &st);
}

static int lfs_do_getattr(const struct fuse_in_header *h,
			  struct fuse_attr_out *out)
{
	struct lfs_node *node = lfs_node_find(h->nodeid);
	struct stat st;

	if (!node)
		return -ESTALE;
	if (fstatat(node->fd, "", &st, AT_EMPTY_PATH))
		return -errno;
	memset(out, 0, sizeof(*out));
	lfs_fill_attr(&out->attr, &st);
	return 0;
}

/* OPEN and OPENDIR: the handle is a descriptor opened for reading */
static int lfs_do_open(const struct fuse_in_header *h,
		       const struct fuse_open_in *in, bool dir,
		       struct fuse_open_out *out)
{
	struct lfs_node *node = lfs_node_find(h->nodeid);
	char path[64];
	int fd;

	if (!node)
		return -ESTALE;
	if ((in->flags & O_ACCMODE) != O_RDONLY || (in->flags & O_TRUNC))
		return -EROFS;
	lfs_proc_path(node->fd, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
	if (fd < 0)
		return -errno;
	memset(out, 0, sizeof(*out));
	out->fh = fd;
	return 0;
}

static ssize_t lfs_do_read(const struct fuse_read_in *in)
{
	size_t size = in->size < sizeof(reply_buf) ? in->size : sizeof(reply_buf);
	ssize_t r = pread(in->fh, reply_buf, size, in->offset);

	return r < 0 ? -errno : r;
}

/*
 * READDIR: entries from the kernel's position @in->offset on, as many as
 * fit in @in->size.  Offsets are the backing directory's own, so each
 * request seeks there first.
 */
static ssize_t lfs_do_readdir(const struct fuse_read_in *in)
{
	size_t room = in->size < sizeof(reply_buf) ? in->size : sizeof(reply_buf);
	char buf[16384];
	size_t used = 0;

	if (lseek(in->fh, in->offset, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		ssize_t n = getdents64(in->fh, buf, sizeof(buf));
		ssize_t pos;

		if (n < 0)
			return used ? (ssize_t)used : -errno;
		if (!n)
			return used;
		for (pos = 0; pos < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + pos);
			size_t len = strlen(d->d_name);
			struct fuse_dirent *de = (void *)(reply_buf + used);
			size_t rec = FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + len);

			if (used + rec > room)
				return used;
			memset(de, 0, rec);
			de->ino = d->d_ino;
			de->off = d->d_off;
			de->namelen = len;
			de->type = d->d_type;
			memcpy(de->name, d->d_name, len);
			used += rec;
			pos += d->d_reclen;
		}
	}
}

static int lfs_do_statfs(struct fuse_statfs_out *out)
{
	struct lfs_node *root = lfs_node_find(FUSE_ROOT_ID);
	struct statvfs sv;

	if (fstatvfs(root->fd, &sv))
		return -errno;
	memset(out, 0, sizeof(*out));
	out->st.blocks = sv.f_blocks;
	out->st.bfree = sv.f_bfree;
	out->st.bavail = sv.f_bavail;
	out->st.files = sv.f_files;
	out->st.ffree = sv.f_ffree;
	out->st.bsize = sv.f_bsize;
	out->st.frsize = sv.f_frsize;
	out->st.namelen = sv.f_namemax;
	return 0;
}

/*
 * GETXATTR (@name set) and LISTXATTR: a size query when @size is 0,
 * else the value or the list.  Returns the length, or -errno.
 */
static ssize_t lfs_do_xattr(const struct fuse_in_header *h, const char *name,
			    uint32_t size)
{
	struct lfs_node *node = lfs_node_find(h->nodeid);
	char path[64];
	struct stat st;
	ssize_t r;

	if (!node)
		return -ESTALE;
	if (size > sizeof(reply_buf))
		size = sizeof(reply_buf);
	if (fstatat(node->fd, "", &st, AT_EMPTY_PATH))
		return -errno;
	/* through /proc a symlink's own xattrs are out of reach */
	if (S_ISLNK(st.st_mode))
		return name ? -ENODATA : 0;
	lfs_proc_path(node->fd, path, sizeof(path));
	if (name)
		r = getxattr(path, name, size ? reply_buf : NULL, size);
	else
		r = listxattr(path, size ? reply_buf : NULL, size);
	return r < 0 ? -errno : r;
}

static ssize_t lfs_do_readlink(const struct fuse_in_header *h)
{
	struct lfs_node *node = lfs_node_find(h->nodeid);
	ssize_t r;

	if (!node)
		return -ESTALE;
	r = readlinkat(node->fd, "", reply_buf, sizeof(reply_buf));
	return r < 0 ? -errno : r;
}

/* Answer one request.  Returns 0, 1 when the session is over, or -errno. */
static int lfs_handle(int dev, const char *req, size_t len)
{
	const struct fuse_in_header *h = (const void *)req;
	const void *arg = req + sizeof(*h);
	union {
		struct fuse_entry_out entry;
		struct fuse_attr_out attr;
		struct fuse_open_out open;
		struct fuse_statfs_out statfs;
		struct fuse_getxattr_out xattr;
	} out;
	ssize_t r;
	int err;

	if (len < sizeof(*h) || h->len != len)
		return -EPROTO;
	switch (h->opcode) {
	case FUSE_INIT:
		return lfs_do_init(dev, h, arg);
	case FUSE_DESTROY:
		lfs_reply(dev, h->unique, 0, NULL, 0);
		return 1;
	case FUSE_FORGET:
		lfs_node_forget(h->nodeid,
				((const struct fuse_forget_in *)arg)->nlookup);
		return 0;
	case FUSE_BATCH_FORGET: {
		const struct fuse_batch_forget_in *b = arg;
		const struct fuse_forget_one *one = (const void *)(b + 1);
		uint32_t i;

		for (i = 0; i < b->count; i++)
			lfs_node_forget(one[i].nodeid, one[i].nlookup);
		return 0;
	}
	case FUSE_INTERRUPT:
		/* every request is answered at once: nothing to interrupt */
		return 0;
	case FUSE_LOOKUP:
		err = lfs_do_lookup(h, arg, &out.entry);
		return lfs_reply(dev, h->unique, err, &out.entry, sizeof(out.entry));
	case FUSE_GETATTR:
		err = lfs_do_getattr(h, &out.attr);
		return lfs_reply(dev, h->unique, err, &out.attr, sizeof(out.attr));
	case FUSE_OPEN:
	case FUSE_OPENDIR:
		err = lfs_do_open(h, arg, h->opcode == FUSE_OPENDIR, &out.open);
		return lfs_reply(dev, h->unique, err, &out.open, sizeof(out.open));
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
		close(((const struct fuse_release_in *)arg)->fh);
		return lfs_reply(dev, h->unique, 0, NULL, 0);
	case FUSE_READ:
		r = lfs_do_read(arg);
		break;
	case FUSE_READDIR:
		r = lfs_do_readdir(arg);
		break;
	case FUSE_STATFS:
		err = lfs_do_statfs(&out.statfs);
		return lfs_reply(dev, h->unique, err, &out.statfs,
				 sizeof(out.statfs));
	case FUSE_GETXATTR:
	case FUSE_LISTXATTR: {
		const struct fuse_getxattr_in *in = arg;
		const char *name = h->opcode == FUSE_GETXATTR ?
				   (const char *)(in + 1) : NULL;

		r = lfs_do_xattr(h, name, in->size);
		if (r < 0 || in->size)
			break;
		memset(&out.xattr, 0, sizeof(out.xattr));
		out.xattr.size = r;
		return lfs_reply(dev, h->unique, 0, &out.xattr,
				 sizeof(out.xattr));
	}
	case FUSE_READLINK:
		r = lfs_do_readlink(h);
		break;
	default:
		return lfs_reply(dev, h->unique, -ENOSYS, NULL, 0);
	}
	/* a reply of @r bytes of reply_buf, or an error */
	return lfs_reply(dev, h->unique, r < 0 ? r : 0, reply_buf,
			 r < 0 ? 0 : r);
}

static int lfs_serve(int dev)
{
	static char req[LFS_FUSE_BUF];

	for (;;) {
		ssize_t n = read(dev, req, sizeof(req));
		int err;

		if (n < 0) {
			/* ENODEV: unmounted; ENOENT: a request went away */
			if (errno == ENODEV)
				return 0;
			if (errno == ENOENT || errno == EINTR || errno == EAGAIN)
				continue;
			lfs_msg("reading /dev/fuse: %s", strerror(errno));
			return -1;
		}
		err = lfs_handle(dev, req, n);
		if (err == 1)
			return 0;
		if (err < 0) {
			lfs_msg("request %" PRIu32 ": %s",
				((const struct fuse_in_header *)req)->opcode,
				strerror(-err));
			return -1;
		}
	}
}

/* @fd moved above stdio, which lfs_detach() points at /dev/null */
static int lfs_fd_above_stdio(int fd)
{
	int moved;

	if (fd < 0 || fd > 2)
		return fd;
	moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return moved;
}

/*
 * In the background server: no descriptor but @keep[] (test harnesses
 * wait for their pipes to close), stdio on /dev/null.
 */
static int lfs_detach(const int keep[2])
{
	int lo = keep[0] < keep[1] ? keep[0] : keep[1];
	int hi = keep[0] < keep[1] ? keep[1] : keep[0];
	int null = open("/dev/null", O_RDWR);

	if (null < 0)
		return -1;
	if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		return -1;
	if (lo > 3 && close_range(3, lo - 1, 0))
		return -1;
	if (hi > lo + 1 && close_range(lo + 1, hi - 1, 0))
		return -1;
	if (close_range(hi + 1, ~0U, 0))
		return -1;
	return setsid() < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	char opts[256];
	struct stat st;
	int dev, root, keep[2];
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "-f")) {
		foreground = true;
		argc--;
		argv++;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: lfs-fuse [-f] DIR MNT\n");
		return 2;
	}
	root = lfs_fd_above_stdio(open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (root < 0 || fstat(root, &st)) {
		fprintf(stderr, "lfs-fuse: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	root_dev = st.st_dev;
	root_ino = st.st_ino;
	if (lfs_node_add(root, &st)) {
		fprintf(stderr, "lfs-fuse: %s\n", strerror(ENOMEM));
		return 1;
	}
	dev = lfs_fd_above_stdio(open("/dev/fuse", O_RDWR | O_CLOEXEC));
	if (dev < 0) {
		fprintf(stderr, "lfs-fuse: /dev/fuse: %s\n", strerror(errno));
		return 1;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other,default_permissions",
		 dev);
	if (mount("lfs-fuse", argv[2], "fuse", MS_NOSUID | MS_NODEV | MS_RDONLY,
		  opts)) {
		fprintf(stderr, "lfs-fuse: mount %s at %s: %s\n", argv[1],
			argv[2], strerror(errno));
		return 1;
	}
	if (foreground)
		return lfs_serve(dev) ? 1 : 0;

	/* the kernel holds requests until INIT is answered: return now */
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "lfs-fuse: fork: %s\n", strerror(errno));
		umount2(argv[2], MNT_DETACH);
		return 1;
	}
	if (pid)
		return 0;
	keep[0] = dev;
	keep[1] = root;
	if (lfs_detach(keep))
		return 1;
	return lfs_serve(dev) ? 1 : 0;
}
