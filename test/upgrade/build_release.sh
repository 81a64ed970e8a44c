#!/usr/bin/env bash
# A released kernel_ml, built from git history into a private copy of the
# PostgreSQL installation that pg_config (on PATH) names, for
# test/t/015_upgrade_build.pl:
#   bash test/upgrade/build_release.sh SOURCE REF DEST
# SOURCE: a clone of kernel_ml with history; REF: the commit to build; DEST:
# an empty directory.  Copies the server's installation into DEST/pg (as
# /work/dev/devpg.sh does: the binaries, the library and share folders, and
# a link to the server headers; PostgreSQL finds its folders relative to its
# binaries), removes every kernel_ml file from the copy, extracts REF with
# git archive into DEST/src and builds and installs it there with the copy's
# pg_config (without LLVM bitcode: JIT plays no part, and clang doubled the
# build time).  Prints the copy's install path (the folder holding bin/, for
# PostgreSQL::Test::Cluster's install_path) on its last line.  Nothing
# outside DEST is written.
#
# Exit status 3 (with a message) when SOURCE has no history holding REF
# (not a git clone, or a shallow one): the caller skips.  Any other failure
# is an error (status 1).
set -euo pipefail
src=$1 ref=$2 dest=$3

# git refuses a repository another user owns ("dubious ownership"): the TAP
# tests run as postgres, the clone may be root's.  Reading is all we do.
git() { command git -c safe.directory='*' -C "$src" "$@"; }
if ! git rev-parse --git-dir >/dev/null 2>&1; then
	echo "$src is not a git clone: cannot build kernel_ml $ref from history" >&2
	exit 3
fi
if ! git cat-file -e "$ref^{commit}" 2>/dev/null; then
	if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
		echo "$src is a shallow clone without commit $ref (git fetch --unshallow to run this test)" >&2
	else
		echo "$src has no commit $ref" >&2
	fi
	exit 3
fi

bindir=$(pg_config --bindir)
prefix=$(dirname "$bindir")
sharedir=$(pg_config --sharedir)
incdir=$(pg_config --includedir-server)
pg=$dest/pg
mkdir -p "$pg"
case "$sharedir" in
"$prefix"/*)
	# one prefix holds everything (a source build's layout)
	cp -a "$prefix/." "$pg/"
	install_path=$pg
	share_copy=$pg/${sharedir#"$prefix"/}
	;;
*)
	# Debian: /usr/lib/postgresql/15/{bin,lib}, /usr/share/postgresql/15,
	# /usr/include/postgresql/15/server; mirrored under $pg from their
	# common ancestor
	top=$prefix
	while [ "${sharedir#"$top"/}" = "$sharedir" ]; do top=$(dirname "$top"); done
	install_path=$pg/${prefix#"$top"/}
	mkdir -p "$(dirname "$install_path")" "$(dirname "$pg/${sharedir#"$top"/}")"
	cp -a "$prefix" "$install_path"
	share_copy=$pg/${sharedir#"$top"/}
	cp -a "$sharedir" "$share_copy"
	incparent=$(dirname "$incdir")
	case "$incparent" in
	"$top"/*)
		mkdir -p "$(dirname "$pg/${incparent#"$top"/}")"
		ln -sfn "$incparent" "$pg/${incparent#"$top"/}"
		;;
	esac
	;;
esac
pgc=$install_path/bin/pg_config
[ "$("$pgc" --bindir)" = "$install_path/bin" ] && [ "$("$pgc" --sharedir)" = "$share_copy" ] || {
	echo "the copy of the installation in $pg does not find its own folders (pg_config: $("$pgc" --sharedir))" >&2
	exit 1
}
rm -rf "$("$pgc" --pkglibdir)"/kernel_ml.so "$("$pgc" --pkglibdir)"/bitcode/kernel_ml* \
	"$("$pgc" --sharedir)"/extension/kernel_ml[.-]*

mkdir -p "$dest/src"
git archive --format=tar "$ref" | tar -C "$dest/src" -xf -
make -s -C "$dest/src" -j2 PG_CONFIG="$pgc" with_llvm=no >"$dest/build.log" 2>&1 &&
	make -s -C "$dest/src" PG_CONFIG="$pgc" with_llvm=no install >>"$dest/build.log" 2>&1 || {
	tail -30 "$dest/build.log" >&2
	echo "building kernel_ml $ref failed (log: $dest/build.log)" >&2
	exit 1
}
echo "$install_path"
