#!/bin/bash
# Install the Debian packages named on the command line that are missing.
# Quiet when everything is present.
set -euo pipefail
missing=()
for p in "$@"; do
	st=$(dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0
sudo=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || {
		echo "deps: missing ${missing[*]}; run 'make deps' as root" >&2
		exit 1
	}
	sudo=sudo
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/lfs-deps.log 2>&1 || {
	cat /tmp/lfs-deps.log >&2
	exit 1
}
