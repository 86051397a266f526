#!/bin/bash
# unshare-m.sh CMD [ARG...]: run CMD in a mount namespace of its own,
# whose mounts do not reach the namespace it came from.
#
# unshare(1)'s --propagation private makes every mount of the new
# namespace private, starting at /; where / is not a mount point (a plain
# chroot, such as a build root), that fails with EINVAL. There the new
# namespace keeps the propagation its mounts have (a chroot's builder
# usually runs it in a private namespace already). Silent either way:
# the callers' outputs are compared exactly.
if unshare --mount --propagation private true 2>/dev/null; then
	exec unshare --mount --propagation private -- "$@"
fi
exec unshare --mount --propagation unchanged -- "$@"
