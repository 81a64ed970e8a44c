#!/usr/bin/env bash
# A copy of the tree for a build of kernel_ml in another configuration (the
# ASan+UBSan build of test/fuzz/installcheck_asan.sh, the build for the
# assert-enabled server of test/debug_server.sh), kept between runs in
# test/build/server-NAME (which "make clean" removes):
#   bash test/build_copy.sh NAME CONFIG     prints the copy's folder
# CONFIG names the build's flags, compilers and server: when it differs
# from the last run's, the copy starts from clean.  Otherwise every file but
# the build products (*.o, *.bc, *.so) is replaced by the tree's, mtimes
# kept, so make rebuilds only what changed since (the Makefile rebuilds
# everything on a header change), and files removed from the tree go.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1
config=$2
dst=test/build/server-$name
stamp=$dst.config
if [ "$(cat "$stamp" 2>/dev/null)" != "$config" ]; then
	rm -rf "$dst"
fi
mkdir -p "$dst"
find "$dst" -type f ! -name '*.o' ! -name '*.bc' ! -name '*.so' -delete
tar --exclude=./.git --exclude=./test/build --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
	--exclude=./results --exclude=./regression.diffs --exclude=./regression.out \
	-cf - . | tar -C "$dst" -xf -
echo "$config" > "$stamp"
echo "$(pwd)/$dst"
