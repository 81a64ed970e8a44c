#!/usr/bin/env bash
# Build Citus (a test dependency, AGPL-3.0, never shipped with kernel_ml)
# from the source archive in ../shared/citus/ for the PostgreSQL whose
# pg_config is on PATH (or $PG_CONFIG), once per machine, and install it
# into that server.  The built tree is cached outside the clone in
# KM_CITUS_CACHE (default /var/cache/kernel_ml), one folder per Citus and
# server version; a second run only installs (about a second).
#   bash tools/build-citus.sh        prints the cached build's folder
# Exit 3 when the archive is missing (the Citus stage is then skipped).
set -euo pipefail
cd "$(dirname "$0")/.."

archive=${KM_CITUS_ARCHIVE:-../shared/citus/citus-13.2.2.tar.gz}
pg_config=${PG_CONFIG:-pg_config}
if [ ! -r "$archive" ]; then
	echo "build-citus: no Citus source archive at $archive" >&2
	exit 3
fi
# Debian packages Citus needs to build besides postgresql-server-dev-15
# (../shared/citus/README.md): PostgreSQL's pg_config.h defines
# HAVE_LIBZSTD, and libpq-be.h reaches gssapi.h.
need=()
for p in libzstd-dev libkrb5-dev liblz4-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "build-citus: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq "${need[@]}" >/dev/null
fi

version=$(basename "$archive" .tar.gz)
server=$("$pg_config" --version | tr -c 'A-Za-z0-9.\n' '-')
incdir=$("$pg_config" --includedir-server)
key=$(printf '%s|%s|%s' "$(sha256sum "$archive" | cut -c1-16)" "$server" "$incdir" | sha256sum | cut -c1-12)
cache=${KM_CITUS_CACHE:-/var/cache/kernel_ml}
tree=$cache/$version-$key
mkdir -p "$cache"
exec 9>"$cache/.citus.lock"
flock 9

if [ ! -e "$tree/.complete" ]; then
	rm -rf "$tree"
	mkdir -p "$tree"
	echo "build-citus: building $version for $("$pg_config" --version) in $tree (1.5-2.5 minutes)" >&2
	tar xzf "$archive" -C "$tree" --strip-components=1
	# Debian's PostgreSQL 15.18 and later export have_createdb_privilege(),
	# which Citus's compatibility header defines again as static inline for
	# PostgreSQL < 16: use the server's declaration where it has one.
	if grep -q 'have_createdb_privilege' "$incdir/commands/dbcommands.h" 2>/dev/null; then
		perl -0pi -e 's/static inline bool\nhave_createdb_privilege\(void\)\n\{.*?\n\}\n/#include "commands\/dbcommands.h"\n/s' \
			"$tree/src/include/pg_version_compat.h"
		grep -q '#include "commands/dbcommands.h"' "$tree/src/include/pg_version_compat.h" ||
			{ echo "build-citus: the have_createdb_privilege fix did not apply" >&2; exit 1; }
	fi
	(cd "$tree" && ./configure -q --without-libcurl PG_CONFIG="$(command -v "$pg_config")" >"$tree/configure.log" 2>&1 &&
		make -s -j2 with_llvm=no >"$tree/build.log" 2>&1) ||
		{ echo "build-citus: build failed (last lines of $tree/build.log):" >&2; tail -20 "$tree/build.log" >&2; exit 1; }
	touch "$tree/.complete"
fi
# Install when the server lacks this build's library.
if ! cmp -s "$tree/src/backend/distributed/citus.so" "$("$pg_config" --pkglibdir)/citus.so"; then
	(cd "$tree" && make -s install with_llvm=no PG_CONFIG="$(command -v "$pg_config")" >"$tree/install.log" 2>&1) ||
		{ echo "build-citus: install failed" >&2; tail -20 "$tree/install.log" >&2; exit 1; }
fi
echo "$tree"
