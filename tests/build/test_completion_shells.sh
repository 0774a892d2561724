#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The zsh and fish completion, as those shells run them: fish's `complete -C`
# on build/sluice.fish, and a real interactive zsh on a pseudo-terminal
# (zpty) completing with compinit and build/_sluice, its matches captured as
# the completion system adds them. Both scripts name every option of the
# table, so they cannot drift from it. Needs `make all` (build/), zsh, fish.
set -u
cd "$(dirname "$0")/../.."

passed=0
failed=0
tmp=$(mktemp -d /tmp/sluice-compl.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
check() { if "${@:2}" >/dev/null 2>&1; then ok "$1"; else fail "$1"; fi; }
# has "WORDS" WORD...: every WORD is among WORDS.
has() {
	local w
	for w in "${@:2}"; do grep -qxF -- "$w" <<<"$1" || return 1; done
}
lacks() { ! grep -qxF -- "$2" <<<"$1"; }

FISH=build/sluice.fish
ZSH=build/_sluice

# fish_comp 'LINE': the words fish offers at the end of LINE.
fish_comp() {
	fish -N -c 'source $argv[1]; complete -C $argv[2]' "$FISH" "$1" | cut -f1
}

# zsh_comp 'LINE': the matches zsh's completion system adds for LINE<Tab>.
cat >"$tmp/drive.zsh" <<'ZSH'
zmodload zsh/zpty || exit 1
# wait_for TEXT: read the terminal until TEXT shows (10 seconds at most).
wait_for() {
	local out= line
	while zpty -r -t sh line 2>/dev/null || { sleep 0.05; (( SECONDS < 10 )); }; do
		out+=$line
		[[ $out == *$1* ]] && return 0
	done
	return 1
}
zpty sh 'zsh -f -i'
zpty -w sh "PS1='' PROMPT2=''; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D"
# Each match the completion functions add is also a line in $2.
zpty -w sh "compadd() { if (( ! \${@[(I)-[OAD]*]} )); then local -a m; builtin compadd -O m \"\$@\"; print -rl -- \$m >> $2; fi; builtin compadd \"\$@\"; }"
zpty -w sh "zstyle ':completion:*' list-prompt ''; LISTMAX=100000; print -r -- \${:-RE}ADY"
wait_for READY || exit 1
# zle does not complete while more input is waiting: the Tab alone, then ^U.
zpty -w -n sh "$3"$'\t'
sleep 1
zpty -w -n sh $'\x15'
zpty -w sh 'print -r -- ${:-DO}NE'
wait_for DONE
rc=$?
zpty -d sh
exit $rc
ZSH
zsh_comp() {
	rm -f "$tmp/matches"
	timeout 30 zsh -f "$tmp/drive.zsh" "$PWD/build" "$tmp/matches" "$1" >/dev/null 2>&1 &&
		sort -u "$tmp/matches" 2>/dev/null
}

verbs="add del delete rm list ls flush"
for shell in fish zsh; do
	comp=${shell}_comp
	check "$shell: sluice att -> attach" has "$($comp 'sluice att')" attach
	check "$shell: sluice st -> status stats" has "$($comp 'sluice st')" status stats
	check "$shell: no attach for st" lacks "$($comp 'sluice st')" attach
	check "$shell: attach --mo -> --mode" has "$($comp 'sluice attach lo --mo')" --mode
	check "$shell: --mode values" has "$($comp 'sluice attach lo --mode ')" native generic skb
	check "$shell: --sort values" has "$($comp 'sluice top lo --sort ')" drops passed rate
	# shellcheck disable=SC2086
	check "$shell: rule verbs" has "$($comp 'sluice rule ')" $verbs
	check "$shell: attach offers every interface" has "$($comp 'sluice attach ')" lo
	check "$shell: set offers no attach-only option" lacks "$($comp 'sluice set lo --')" --mode
	check "$shell: help COMMAND" has "$($comp 'sluice help ')" attach rule top
done
check "fish: -j before the command" has "$(fish_comp 'sluice -j st')" status stats
check "fish: stats --watch 2 is not the interface" \
	test -z "$(fish_comp 'sluice stats --watch 2 lo ')"

# Every option of the table, in both scripts: the bash one names them all.
options=$(grep -oE -- '--[a-z0-9-]+' build/sluice.bash | grep -v -- '--$' | sort -u)
check "the table has options" test "$(wc -l <<<"$options")" -gt 20
missing_fish=
missing_zsh=
for o in $options; do
	grep -q -- "-l ${o#--} " "$FISH" || missing_fish+=" $o"
	grep -qE -- "'$o(=|=-)?\\[" "$ZSH" || missing_zsh+=" $o"
done
check "fish names every option${missing_fish:+ (missing:$missing_fish)}" test -z "$missing_fish"
check "zsh names every option${missing_zsh:+ (missing:$missing_zsh)}" test -z "$missing_zsh"
check "zsh: the script parses" zsh -n "$ZSH"
check "fish: the script parses" fish -n "$FISH"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
