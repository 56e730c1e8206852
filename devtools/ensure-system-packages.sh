#!/usr/bin/env bash
# Install Debian packages the portal needs, only when their program is missing.
# Usage: ensure-system-packages.sh redis-server chromium fonts-liberation
set -euo pipefail

# Packages that bring a program are present when the program is; others (fonts) are asked of dpkg.
declare -A program=( [redis-server]=redis-server [chromium]=chromium )
missing=()
for package in "$@"; do
  if [ -n "${program[$package]:-}" ]; then
    command -v "${program[$package]}" >/dev/null 2>&1 || missing+=("$package")
  else
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
  echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1
fi
echo "installing from Debian's packages: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts redis-server as a service on 6379 after installing it; the portal starts its own.
if [[ " ${missing[*]} " == *" redis-server "* ]] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  $sudo systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
