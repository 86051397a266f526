# 'make install': the tools, mount(8)'s helper, the man page, and the
# module's source for DKMS.  See docs/podman.md.
#
#   make install [DESTDIR=...] [PREFIX=/usr/local]
#
#   $(PREFIX)/bin/layerfs-mount        the mount helper (containers:
#                                      podman's overlay mount_program)
#   $(SBINDIR)/mount.layerfs           the same program, where mount(8)
#                                      looks for it (SBINDIR=/sbin)
#   $(PREFIX)/bin/oci2ovl              OCI images to layer directories
#   $(MANDIR)/man1/oci2ovl.1, $(MANDIR)/man8/layerfs-mount.8,
#   $(MANDIR)/man8/mount.layerfs.8
#   $(DKMS_SRCDIR)/layerfs-$(LFS_VERSION)/   the module source and dkms.conf
#                                      (DKMS_SRCDIR=/usr/src)
#
# Nothing is loaded or registered: after installing into /, run
# "dkms install -m layerfs -v $(LFS_VERSION)" to build the module for the
# running kernel.

LFS_VERSION := 0.1
DESTDIR ?=
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= /sbin
MANDIR ?= $(PREFIX)/share/man
DKMS_SRCDIR ?= /usr/src
INSTALL ?= install

DEPS += dkms

LFS_DKMS_DIR = $(DESTDIR)$(DKMS_SRCDIR)/layerfs-$(LFS_VERSION)

.PHONY: install install-tools install-dkms

install: install-tools install-dkms

install-tools: build/bin/layerfs-mount build/bin/oci2ovl
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 0755 build/bin/layerfs-mount build/bin/oci2ovl $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 0755 build/bin/layerfs-mount $(DESTDIR)$(SBINDIR)/mount.layerfs
	$(INSTALL) -m 0644 docs/oci2ovl.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 docs/layerfs-mount.8 $(DESTDIR)$(MANDIR)/man8/
	echo '.so man8/layerfs-mount.8' >$(DESTDIR)$(MANDIR)/man8/mount.layerfs.8

# the module's source tree as DKMS builds it: Kbuild finds uapi/ at src/..
install-dkms:
	$(INSTALL) -d $(LFS_DKMS_DIR)/src $(LFS_DKMS_DIR)/uapi
	$(INSTALL) -m 0644 src/Kbuild $(filter-out %.mod.c,$(wildcard src/*.[ch])) \
		$(LFS_DKMS_DIR)/src/
	$(INSTALL) -m 0644 uapi/layerfs.h $(LFS_DKMS_DIR)/uapi/
	sed 's/@VERSION@/$(LFS_VERSION)/' src/dkms.conf >$(LFS_DKMS_DIR)/dkms.conf
