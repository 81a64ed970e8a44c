#!/usr/bin/env bash
# Build (once) an assert-enabled PostgreSQL 15 from Debian's own source
# package, for the debug stage of the test suite (test/debug_server.sh):
#   bash tools/build-debug-postgres.sh        prints the install's pg_config
#
# The server is configured with --enable-cassert (CLOBBER_FREED_MEMORY,
# MEMORY_CONTEXT_CHECKING, assertions) and built at -O0: at -O1 gcc 12
# drops the wipe_mem() right before free() in AllocSetReset/AllocSetFree as
# a dead store, so a read of a freed block would see intact bytes.  The
# postmaster is also started with a low glibc mmap threshold
# (test/debug_server.sh), so freed blocks are unmapped and a stale read
# faults.  Beside the server: PostgreSQL's TAP modules, auto_explain and
# pg_cron (from Debian's pg-cron source package), all built for it.
#
# The install lives outside the clone, in KM_DEBUG_PG_CACHE (default
# /var/cache/kernel_ml), one folder per version and flags; a second run on
# the same machine finds the stamp and does nothing.  About 6 minutes on
# 2 cores when it builds.
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${KM_DEBUG_PG_CACHE:-/var/cache/kernel_ml}
flags_id="cassert-O0-v1"
mkdir -p "$cache"
exec 9>"$cache/.build.lock"
flock 9

log() { echo "build-debug-postgres: $*" >&2; }

# A deb-src entry mirroring the Debian entries of the machine's sources
# (same URIs, suites and keyring), so apt-get source can find the package.
src_list=/etc/apt/sources.list.d/kernel_ml-debian-src.sources
if [ ! -e "$src_list" ]; then
	awk '
		/^Types:/ { types = $0; next }
		/^$/ { if (block != "" && types ~ /deb/ && block ~ /debian\.org/) print "Types: deb-src\n" block; block = ""; types = ""; next }
		{ block = block $0 "\n" }
		END { if (block != "" && types ~ /deb/ && block ~ /debian\.org/) print "Types: deb-src\n" block }
	' /etc/apt/sources.list.d/debian.sources > "$src_list.tmp"
	mv "$src_list.tmp" "$src_list"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
fi

# Every postgresql-15 source version Debian lists, newest first; the build
# takes the newest one that actually downloads (a mirror may list a
# security update whose files it does not hold).
versions=$(apt-cache showsrc postgresql-15 2>/dev/null | sed -n 's/^Version: //p' | sort -V -r -u)
if [ -z "$versions" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	versions=$(apt-cache showsrc postgresql-15 | sed -n 's/^Version: //p' | sort -V -r -u)
fi
[ -n "$versions" ] || { log "no postgresql-15 source package found"; exit 1; }

# A build already in the cache for any listed version is used as it is.
for version in $versions; do
	if [ -e "$cache/pg-$version-$flags_id/.complete" ]; then
		echo "$cache/pg-$version-$flags_id/bin/pg_config"
		exit 0
	fi
done

work=$(mktemp -d /tmp/kernel_ml_pgbuild.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
version=""
for v in $versions; do
	if (cd "$work" && apt-get source -qq --download-only "postgresql-15=$v" >/dev/null 2>&1); then
		version=$v
		break
	fi
	rm -f "$work"/postgresql-15_*
	log "postgresql-15 $v is listed but does not download; trying an older one"
done
[ -n "$version" ] || { log "no postgresql-15 source version downloads"; exit 1; }
prefix="$cache/pg-$version-$flags_id"

log "building PostgreSQL $version with --enable-cassert into $prefix"
need=()
for p in dpkg-dev gcc make zlib1g-dev libipc-run-perl; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq "${need[@]}" >/dev/null
fi

tarball=$(ls "$work"/postgresql-15_*.orig.tar.* | head -1)
mkdir "$work/src"
tar -xf "$tarball" -C "$work/src" --strip-components=1

rm -rf "$prefix"
(
	cd "$work/src"
	./configure -q --prefix="$prefix" --enable-cassert --enable-debug --enable-tap-tests \
		--without-icu --without-readline CFLAGS="-O0 -g"
	make -s -j2 >/dev/null
	make -s install >/dev/null
	# TAP modules (PostgreSQL::Test::Cluster) and auto_explain for this server
	make -s -C src/test/perl install >/dev/null
	make -s -C contrib/auto_explain install >/dev/null
) 2>&1 | grep -v -E '^(In file included|.*warning:|.*note:|[[:space:]])' >&2 || true
[ -x "$prefix/bin/postgres" ] || { log "the server did not build"; exit 1; }

# pg_cron from Debian's source package, built for this server.
(
	cd "$work"
	apt-get source -qq --download-only pg-cron >/dev/null 2>&1 &&
		mkdir cron && tar -xf "$(ls pg-cron_*.orig.tar.* | head -1)" -C cron --strip-components=1 &&
		make -s -C cron PG_CONFIG="$prefix/bin/pg_config" >/dev/null 2>&1 &&
		make -s -C cron PG_CONFIG="$prefix/bin/pg_config" install >/dev/null 2>&1
) || log "pg_cron could not be built for the debug server: its TAP test will skip there"

touch "$prefix/.complete"
echo "$prefix/bin/pg_config"
