#!/usr/bin/env bash
# check_seam.sh [METHOD...] (default: every method): a method is one file in src/core/methods/ (and
# its header) plus one line of src/core/methods/methods.def, and nothing else in
# src/ depends on it (issue 23: "a new method is one file and one registry
# line").  For each METHOD (by the NAME of its methods.def line, e.g. SVR),
# a copy of the tree without its file, its header and its registry line
# must build with warnings as errors, and the built extension must leave no
# km_ symbol undefined (a call into the removed file that a declaration
# elsewhere still allowed).  Its id stays unused in the copy, so the ids
# after it are renumbered there: that is fine for a build check.  Ends with
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

# no METHOD: every method of methods.def
[ $# -gt 0 ] || set -- $(sed -nE 's/^KM_METHOD\([0-9]+, *([A-Z_0-9]+),.*/\1/p' src/core/methods/methods.def)
werror="-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare -Werror"
passed=0
failed=0
tmp=$(mktemp -d /tmp/kernel_ml_seam.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for name in "$@"; do
	line=$(grep -E "^KM_METHOD\([0-9]+, *$name," src/core/methods/methods.def)
	ops=$(echo "$line" | sed -E 's/^KM_METHOD\([0-9]+, *[A-Z_]+, *([a-z_0-9]+)\).*/\1/')
	file=$(grep -lE "^const km_method_ops $ops\b" src/core/methods/*.c)
	if [ -z "$line" ] || [ -z "$file" ]; then
		echo "not ok - method $name: no methods.def line or no file defining its ops"
		failed=$((failed + 1))
		continue
	fi
	header=${file%.c}.h
	copy=$tmp/$name
	mkdir -p "$copy"
	tar --exclude=./.git --exclude=./test/build --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude=./results -cf - . | tar -C "$copy" -xf -
	rm -f "$copy/$file" "$copy/$header"
	grep -vF "$line" src/core/methods/methods.def > "$copy/src/core/methods/methods.def"
	# the ids of the methods after it close the gap (methods.c checks the order)
	awk 'BEGIN { n = 0 } /^KM_METHOD\(/ { n++; sub(/\([0-9]+,/, "(" n ",") } { print }' \
		"$copy/src/core/methods/methods.def" > "$copy/methods.def.new" && mv "$copy/methods.def.new" "$copy/src/core/methods/methods.def"
	if ! out=$(make -s -C "$copy" -j2 KM_EXTRA_CFLAGS="$werror" 2>&1); then
		echo "not ok - without $file and its methods.def line the extension does not build:"
		echo "$out" | grep -E 'error|undefined' | head -8
		failed=$((failed + 1))
		continue
	fi
	undef=$(nm -u "$copy/kernel_ml.so" | awk '{ print $2 }' | grep -E '^km_' || true)
	if [ -n "$undef" ]; then
		echo "not ok - without $file the extension leaves km_ symbols undefined: $(echo $undef)"
		failed=$((failed + 1))
		continue
	fi
	[ -f "$header" ] && file="$file + $(basename "$header")"
	echo "ok - method $name is $file and one methods.def line: the rest builds without them"
	passed=$((passed + 1))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
