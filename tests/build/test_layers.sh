#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# user/ is layered (docs/design.md): a file in one layer includes only the
# headers of the layers below it, or of its own layer without a cycle
# between files. Checks every #include "layer/file.h" in user/ against the
# order below, then the file graph for cycles; a header-less include of a
# sibling ("file.h") is refused too, so every dependency is visible.
set -u
cd "$(dirname "$0")/../.."

LAYERS=(base values policy text pins maps reads outputs fleet commands docgen)
passed=0
failed=0

ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }

rank() {
	local i
	for i in "${!LAYERS[@]}"; do
		[ "${LAYERS[$i]}" = "$1" ] && { echo "$i"; return; }
	done
	echo -1
}

# Every C file lives in a layer; above them all sits main.c, the dispatch.
# docgen/, sluice-docgen, which writes man pages and completion, is the top layer.
strays=$(find user -name '*.[ch]' ! -path 'user/main.c' |
	awk -F/ 'NF != 3 { print }')
for f in $(find user -mindepth 2 -name '*.[ch]'); do
	[ "$(rank "$(cut -d/ -f2 <<<"$f")")" -ge 0 ] || strays+=" $f"
done
if [ -z "$strays" ]; then
	ok "every user/ file is in a layer"
else
	fail "files outside the layers: $strays"
fi

# Upward or unqualified includes.
bad=""
edges=""
for f in $(find user -mindepth 2 -name '*.[ch]' | sort); do
	layer=$(cut -d/ -f2 <<<"$f")
	mine=$(rank "$layer")
	node=$(sed 's|^user/||; s|\.[ch]$||' <<<"$f")
	while read -r inc; do
		[ -n "$inc" ] || continue
		dir=${inc%%/*}
		if [ "$dir" = "$inc" ]; then
			# include/ (the contract) and what the build generates (skeletons,
			# the commit) are below everything.
			[ -e "include/$inc" ] || [[ $inc == *.skel.h || $inc == sluice_commit.h ]] ||
				bad+=" $f:$inc"
			continue
		fi
		theirs=$(rank "$dir")
		if [ "$theirs" -lt 0 ] || [ "$theirs" -gt "$mine" ]; then
			bad+=" $f:$inc"
		fi
		target=${inc%.h}
		[ "$target" != "$node" ] && edges+="$node $target"$'\n'
	done < <(sed -n 's/^#include "\(.*\)"/\1/p' "$f")
done
if [ -z "$bad" ]; then
	ok "every include goes to a lower layer or its own"
else
	fail "includes that go up or outside the layers:$bad"
fi

# tsort names a loop on stderr when the file graph has one.
loops=$(printf '%s' "$edges" | tsort 2>&1 >/dev/null | grep -v 'input contains a loop' | tr '\n' ' ')
if [ -z "$loops" ]; then
	ok "no cycle between files"
else
	fail "files that include each other in a cycle: $loops"
fi

# design.md draws the layers: every directory of user/, top to bottom in
# the order above (reversed), and every file of each named in its box.
drawn=$(sed -n 's/^  | user\/\([a-z]*\)\/ .*/\1/p' docs/design.md | tac | tr '\n' ' ')
if [ "$drawn" = "${LAYERS[*]} " ]; then
	ok "design.md draws every layer, in order"
else
	fail "design.md draws '$drawn', the layers are '${LAYERS[*]}'"
fi
unnamed=""
for f in $(find user -mindepth 2 -name '*.c' | sort); do
	layer=$(cut -d/ -f2 <<<"$f")
	box=$(awk -v l="user/$layer/" '/^  \| user\// { on = index($0, "| " l) > 0 } on' docs/design.md)
	grep -qw "$(basename "$f" .c)" <<<"$box" || unnamed+=" $f"
done
if [ -z "$unnamed" ]; then
	ok "design.md names every file of user/ in its layer's box"
else
	fail "files design.md's layer diagram does not name:$unnamed"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
