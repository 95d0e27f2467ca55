#!/usr/bin/env bash
# Podman on a Debian host without a Docker daemon or registry access (CI, these build machines):
# installs podman, runc and debootstrap, and selects runc + cgroupfs, which work where crun fails
# on hybrid cgroups (written to /etc/containers/containers.conf unless it selects runc already). Run as root.
set -euo pipefail
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap >/dev/null
fi
conf=/etc/containers/containers.conf
mkdir -p /etc/containers
if [ ! -s "$conf" ] || ! grep -q '^runtime *= *"runc"' "$conf"; then
  cat > "$conf" <<'CONF'
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
fi
podman --version
