#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# recipe.sh: the Spack recipe (tools/spack/spack_repo/fabshmem/packages/fabshmem/package.py)
# still fits configure.ac, without Spack:
#   - every --with-X/--without-X/--enable-X/--disable-X it passes is an option of configure.ac,
#     and every ac_cv_path_X it sets is an AC_PATH_PROG of configure.ac;
#   - every library configure.ac takes with FSH_DEP is passed as --with-NAME=<prefix>, and the
#     recipe depends on its pkg-config module at configure.ac's minimum version
#     (FSH_DEP([ofi], [libfabric], [libfabric >= 1.14]) wants depends_on("libfabric@1.14:"));
#   - configure.ac's version is a version() of the recipe and the one its url names;
#   - python3 (when there) compiles it.
# Run by `make check` with top_srcdir set; exits 0 pass, 1 fail.

top_srcdir=${top_srcdir:-${0%/*}/../..}
name=spack_recipe
recipe=$top_srcdir/tools/spack/spack_repo/fabshmem/packages/fabshmem/package.py
ac=$top_srcdir/configure.ac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/spack_recipe.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
problems=$tmp/problems
: >"$problems"
problem() { echo "    $*" >>"$problems"; }
report() {
    if [ -s "$problems" ]; then
        echo "$name: FAIL ($(wc -l <"$problems") problem(s))"
        cat "$problems"
        exit 1
    fi
}

[ -f "$recipe" ] || problem "$recipe is missing"
[ -f "$ac" ] || problem "$ac is missing"
report

# configure.ac's options: AC_ARG_WITH/AC_ARG_ENABLE, and FSH_DEP, which makes an AC_ARG_WITH.
sed -n 's/^ *\(AC_ARG_WITH\|FSH_DEP\)(\[\([a-z0-9-]*\)\].*/with-\2/p; s/^ *AC_ARG_ENABLE(\[\([a-z0-9-]*\)\].*/enable-\1/p' \
    "$ac" | sort -u >"$tmp/ac_options"
grep -o -e '--\(with\|without\|enable\|disable\)-[a-z0-9-]*' "$recipe" |
    sed 's/^--without-/with-/; s/^--disable-/enable-/; s/^--//' | sort -u >"$tmp/recipe_options"
if [ ! -s "$tmp/recipe_options" ]; then
    problem "package.py passes no configure option (is it still the recipe?)"
fi
comm -13 "$tmp/ac_options" "$tmp/recipe_options" | while read -r o; do
    problem "package.py passes --$o (or its negation), which configure.ac does not define"
done
grep -o 'ac_cv_path_[A-Za-z0-9_]*' "$recipe" | sort -u | while read -r v; do
    grep -q "^ *AC_PATH_PROG(\[${v#ac_cv_path_}\]" "$ac" ||
        problem "package.py sets $v, but configure.ac has no AC_PATH_PROG([${v#ac_cv_path_}], ...)"
done

# FSH_DEP([ofi], [libfabric], [libfabric >= 1.14], ...): option, pkg-config module, minimum.
sed -n 's/^ *FSH_DEP(\[\([a-z0-9-]*\)\], *\[[^]]*\], *\[\([A-Za-z0-9_-]*\) >= \([0-9.]*\)\].*/\1 \2 \3/p' "$ac" \
    >"$tmp/deps"
if [ ! -s "$tmp/deps" ]; then
    problem "configure.ac has no FSH_DEP([opt], [name], [module >= version], ...) line this check can read"
fi
while read -r opt module min; do
    grep -q -e "\"--with-$opt={" "$recipe" ||
        problem "configure.ac takes $module with --with-$opt, which package.py does not pass"
    grep -q "depends_on(\"$module@$min:\"" "$recipe" ||
        problem "configure.ac wants $module >= $min: package.py lacks depends_on(\"$module@$min:\")"
done <"$tmp/deps"

# The version: m4_define([fsh_major], [0]) and its minor and patch.
part() { sed -n "s/^m4_define(\[fsh_$1\], *\[\([0-9]*\)\]).*/\1/p" "$ac"; }
version=$(part major).$(part minor).$(part patch)
case "$version" in
    *[0-9].[0-9]*.[0-9]*) ;;
    *) problem "cannot read the version from configure.ac's fsh_major/minor/patch (got '$version')" ;;
esac
grep -q "^ *version(\"$version\"" "$recipe" ||
    problem "configure.ac is version $version: package.py has no version(\"$version\""
grep -q "^ *url = .*/fabshmem-$version\.tar\.gz\"" "$recipe" ||
    problem "package.py's url does not name fabshmem-$version.tar.gz (configure.ac's version)"

if command -v python3 >/dev/null 2>&1 &&
    ! python3 -c 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")' "$recipe" \
        2>"$tmp/py"; then
    problem "python3 cannot compile package.py: $(tail -n 1 "$tmp/py")"
fi

report
echo "$name: PASS ($(wc -l <"$tmp/recipe_options") options, $(wc -l <"$tmp/deps") dependencies, version $version)"
