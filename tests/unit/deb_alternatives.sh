#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# deb_alternatives.sh: debian/fabshmem-tools.postinst and .prerm, run against a stand-in
# dpkg-query (which says that openmpi-bin owns /usr/bin/oshcc and /usr/bin/oshrun) and a
# stand-in update-alternatives (which records its calls): postinst offers exactly the three free
# names, each pointing to /usr/libexec/fabshmem/bin/<name>, names the two taken ones and never
# touches them; prerm on remove withdraws only groups whose /usr/bin link is the alternatives
# system's, and neither does anything on upgrade.
# Run by `make check` with top_srcdir set; exits 0 pass, 1 fail.

top_srcdir=${top_srcdir:-${0%/*}/../..}
name=deb_alternatives
tmp=$(mktemp -d "${TMPDIR:-/tmp}/deb_alternatives.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
cat >"$tmp/bin/dpkg-query" <<'SH'
#!/bin/sh
case "$2" in
/usr/bin/oshcc | /usr/bin/oshrun) echo "openmpi-bin: $2"; exit 0 ;;
esac
echo "dpkg-query: no path found matching pattern $2" >&2
exit 1
SH
cat >"$tmp/bin/update-alternatives" <<SH
#!/bin/sh
echo "\$*" >>"$tmp/calls"
SH
chmod +x "$tmp/bin/dpkg-query" "$tmp/bin/update-alternatives"
fails=0
fail() { echo "  $name: FAIL ($*)"; fails=$((fails + 1)); }

: >"$tmp/calls"
PATH="$tmp/bin:$PATH" sh "$top_srcdir/debian/fabshmem-tools.postinst" configure >"$tmp/out" 2>&1 ||
    fail "postinst configure exited $?: $(cat "$tmp/out")"
want="--install /usr/bin/oshc++ oshc++ /usr/libexec/fabshmem/bin/oshc++ 20
--install /usr/bin/oshCC oshCC /usr/libexec/fabshmem/bin/oshCC 20
--install /usr/bin/oshcxx oshcxx /usr/libexec/fabshmem/bin/oshcxx 20"
[ "$(cat "$tmp/calls")" = "$want" ] ||
    fail "postinst called update-alternatives as: $(cat "$tmp/calls"), want: $want"
grep -q '/usr/bin/{oshcc,oshrun} belong to another package' "$tmp/out" ||
    fail "postinst did not name the taken names: $(cat "$tmp/out")"
# Every name postinst offers is one the package installs in /usr/libexec/fabshmem/bin.
for n in oshc++ oshCC oshcxx oshcc oshrun; do
    grep -qx "usr/libexec/fabshmem/bin/$n" "$top_srcdir/debian/fabshmem-tools.install" ||
        fail "debian/fabshmem-tools.install lacks usr/libexec/fabshmem/bin/$n"
done

: >"$tmp/calls"
PATH="$tmp/bin:$PATH" sh "$top_srcdir/debian/fabshmem-tools.postinst" abort-upgrade >/dev/null 2>&1
PATH="$tmp/bin:$PATH" sh "$top_srcdir/debian/fabshmem-tools.prerm" upgrade >/dev/null 2>&1
[ ! -s "$tmp/calls" ] || fail "postinst abort-upgrade or prerm upgrade called: $(cat "$tmp/calls")"
# On remove, --remove only for a name whose /usr/bin link on this machine is the alternatives
# system's (none where openmpi-bin owns them all); anything else would delete another
# package's file.
want=""
for n in oshcc oshrun oshc++ oshCC oshcxx; do
    if [ "$(readlink "/usr/bin/$n" 2>/dev/null)" = "/etc/alternatives/$n" ]; then
        want="$want--remove $n /usr/libexec/fabshmem/bin/$n
"
    fi
done
PATH="$tmp/bin:$PATH" sh "$top_srcdir/debian/fabshmem-tools.prerm" remove >/dev/null 2>&1 ||
    fail "prerm remove exited $?"
got=$(grep -v '^--query ' "$tmp/calls")
[ "$got" = "$(printf '%s' "$want" | sed '/^$/d')" ] ||
    fail "prerm remove called: '$got', want: '$want'"

if [ "$fails" -gt 0 ]; then
    echo "$name: FAIL ($fails checks failed)"
    exit 1
fi
echo "$name: PASS"
