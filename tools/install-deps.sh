#!/usr/bin/env bash
# Install the Debian packages kernel_ml needs to build, test and benchmark.
# Skips apt entirely when everything is already installed.
set -euo pipefail

packages=(
	make gcc
	postgresql-15 postgresql-server-dev-15 postgresql-common
	libopenblas-dev liblapacke-dev
	python3-numpy python3-scipy python3-sklearn python3-psycopg2
	postgresql-plpython3-15 postgresql-15-cron
	libtest-simple-perl libipc-run-perl
	clang libclang-rt-14-dev
	# the stand-alone test programs: CRC-32C (ISA-L) and JSON without PostgreSQL
	libisal-dev libjson-c-dev
)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" >/dev/null
fi
