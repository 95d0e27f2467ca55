#!/usr/bin/env bash
# A Debian 12 base image built without a registry: debootstrap from the Debian mirror apt uses,
# imported into Podman as localhost/debian:bookworm-slim. Only for machines that cannot pull
# python:3.11-slim-bookworm (the default BASE of deploy/Containerfile). Idempotent.
set -euo pipefail
IMAGE="${BASE_IMAGE:-localhost/debian:bookworm-slim}"
PODMAN="${PODMAN:-podman --runtime runc --cgroup-manager=cgroupfs}"
ROOTFS="${ROOTFS:-build/rootfs}"

if $PODMAN image exists "$IMAGE"; then
  echo "$IMAGE exists"
  exit 0
fi
MIRROR="${DEBIAN_MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$(dirname "$ROOTFS")"
ROOTFS="$(cd "$(dirname "$ROOTFS")" && pwd)/$(basename "$ROOTFS")"
rm -rf "$ROOTFS"
debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR"
# The image uses the same mirror as the host for the apt-get steps of the build.
echo "deb $MIRROR bookworm main" > "$ROOTFS/etc/apt/sources.list"
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
tar -C "$ROOTFS" -c . | $PODMAN import - "$IMAGE"
rm -rf "$ROOTFS"
echo "built $IMAGE"
