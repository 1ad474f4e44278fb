#!/usr/bin/env bash
# The documentation holds together: README.md is at most 200 lines; every
# relative Markdown link in the repository's Markdown files names a file or
# folder of the repository, and its #anchor a heading of the target; every
# pointer in code and help texts of the form  FILE.md, "Section"  (quotes
# escaped or not, on one line) names a heading of that file. The checker is
# first run on a small tree with one mistake of each kind, which it must
# report, then on the source tree, where it must report nothing.
# CTest sets PSLAB_SOURCE_DIR (PSLAB, the binary, is not needed).
set -u

SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
TMP=$(mktemp -d /tmp/pslab-it-docs.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0
README_MAX=200

# files ROOT PATTERN...: the repository's files matching the git pathspecs
# (tracked, or new and not ignored); without git, every such file under ROOT
# but build folders and .git.
files() {
  local root=$1
  shift
  if git -C "$root" rev-parse --show-toplevel >/dev/null 2>&1 &&
     [ "$(cd "$root" && pwd -P)" = "$(cd "$(git -C "$root" rev-parse --show-toplevel)" && pwd -P)" ]; then
    git -C "$root" ls-files --cached --others --exclude-standard -- "$@" | sort -u
  else
    local args=() p
    for p in "$@"; do
      [ ${#args[@]} -eq 0 ] || args+=(-o)
      args+=(-name "$p")
    done
    (cd "$root" && find . \( -name .git -o -name 'build*' \) -prune -o -type f \( "${args[@]}" \) -print |
       sed 's|^\./||' | sort)
  fi
}

# headings FILE: the text of each Markdown heading outside fenced code.
headings() {
  awk '
    /^ *(```|~~~)/ { fence = !fence; next }
    fence { next }
    /^#+ / { h = $0; sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h); print h }
  ' "$1"
}

# anchors FILE: GitHub's anchor for each heading (lower case, punctuation
# dropped, spaces to hyphens, -1, -2 ... on repeats).
anchors() {
  headings "$1" | awk '{
    t = tolower($0); gsub(/[^a-z0-9 _-]/, "", t); gsub(/ /, "-", t)
    if (t in seen) { seen[t]++; print t "-" seen[t] } else { seen[t] = 0; print t }
  }'
}

# links FILE: "LINE TARGET" for each Markdown link or image outside fenced
# code and inline code.
links() {
  awk '
    /^ *(```|~~~)/ { fence = !fence; next }
    fence { next }
    {
      s = $0; gsub(/`[^`]*`/, "", s)
      while (match(s, /\]\([^) ]+\)/)) {
        print NR, substr(s, RSTART + 2, RLENGTH - 3)
        s = substr(s, RSTART + RLENGTH)
      }
    }
  ' "$1"
}

# check_tree ROOT: prints one line per problem found under ROOT.
check_tree() {
  local root=$1 n md line target path anchor dir full real file rest sect
  real=$(cd "$root" && pwd -P)
  if [ -f "$root/README.md" ]; then
    n=$(wc -l <"$root/README.md")
    [ "$n" -le "$README_MAX" ] || echo "README.md: $n lines, more than $README_MAX"
  else
    echo "README.md: missing"
  fi
  while IFS= read -r md; do
    dir=$(dirname "$md")
    while read -r line target; do
      case $target in *://* | mailto:*) continue ;; esac
      path=${target%%#*}
      anchor=
      [ "$path" = "$target" ] || anchor=${target#*#}
      if [ -z "$path" ]; then
        full=$root/$md
      else
        full=$root/$dir/$path
      fi
      if [ ! -e "$full" ]; then
        echo "$md:$line: link to $target: no such file"
        continue
      fi
      case $(realpath -m "$full") in
        "$real" | "$real"/*) ;;
        *) echo "$md:$line: link to $target: outside the repository"; continue ;;
      esac
      if [ -n "$anchor" ]; then
        if [ -d "$full" ] || [ "${full%.md}" = "$full" ]; then
          echo "$md:$line: link to $target: an anchor into something not Markdown"
        elif ! anchors "$full" | grep -qxF -- "$anchor"; then
          echo "$md:$line: link to $target: no heading with anchor #$anchor in it"
        fi
      fi
    done < <(links "$root/$md")
  done < <(files "$root" '*.md')

  # Pointers in code: FILE.md, "Section" or FILE.md, \"Section\".
  while IFS= read -r file; do
    [ "$file" != tests/it_docs.sh ] || continue
    grep -nE '[A-Za-z0-9_./-]+\.md, \\?"' "$root/$file" 2>/dev/null |
    while IFS= read -r rest; do
      line=${rest%%:*}
      rest=${rest#*:}
      # Every "FILE.md, "" on the line must open a whole pointer.
      local opens whole
      opens=$(grep -oE '[A-Za-z0-9_./-]+\.md, \\?"' <<<"$rest" | wc -l)
      whole=$(grep -oE '[A-Za-z0-9_./-]+\.md, \\?"[^"\\]+\\?"' <<<"$rest")
      if [ "$opens" -ne "$(grep -c . <<<"$whole")" ] || [ -z "$whole" ]; then
        echo "$file:$line: a pointer FILE.md, \"Section\" that is not whole on its line"
        continue
      fi
      while IFS= read -r p; do
        md=${p%%, *}
        sect=${p#*, }
        sect=${sect#\\}
        sect=${sect#\"}
        sect=${sect%\"}
        sect=${sect%\\}
        if [ ! -f "$root/$md" ]; then
          echo "$file:$line: pointer to $md: no such file (paths are from the repository's root)"
        elif ! headings "$root/$md" | sed 's/`//g' | grep -qxF -- "$sect"; then
          echo "$file:$line: pointer to $md, \"$sect\": no such heading in $md"
        fi
      done <<<"$whole"
    done
  done < <(files "$root" '*.c' '*.h' '*.sh' '*.txt' '*.py' '*.json' 'Makefile')
}

# --------------------------------------------- the checker finds mistakes
F=$TMP/tree
mkdir -p "$F/docs" "$F/src"
seq 1 201 | sed 's/^/line /' >"$F/README.md"
cat >>"$F/README.md" <<'EOF'
# Title
See [the guide](docs/guide.md#the-first-step), [gone](docs/gone.md),
[bad anchor](docs/guide.md#nowhere), [here](#title), [out](../elsewhere.md),
`[in code](docs/none.md)` and [the web](https://example.org/x.md).
```
[in a fence](docs/none2.md)
```
EOF
cat >"$F/docs/guide.md" <<'EOF'
# The guide
## The first step
```
# not a heading
```
EOF
cat >"$F/src/a.c" <<'EOF'
/* docs/guide.md, "The first step" and README.md, "Title" are fine;
 * docs/guide.md, "The last step" is not; nor is docs/gone.md, "Anything". */
static const char h[] = "Reference: docs/guide.md, \"The guide\".\n"
                        "Reference: docs/guide.md, \"not a heading\".\n"
                        "Reference: docs/guide.md, \"Split over\n";
EOF
check_tree "$F" >"$TMP/found"
for want in "README.md: 208 lines, more than 200" \
            "README.md:203: link to docs/gone.md: no such file" \
            "README.md:204: link to docs/guide.md#nowhere: no heading with anchor #nowhere" \
            "README.md:204: link to ../elsewhere.md: no such file" \
            "src/a.c:2: pointer to docs/guide.md, \"The last step\": no such heading" \
            "src/a.c:2: pointer to docs/gone.md: no such file" \
            "src/a.c:4: pointer to docs/guide.md, \"not a heading\": no such heading" \
            "src/a.c:5: a pointer FILE.md, \"Section\" that is not whole on its line"; do
  if ! grep -qF -- "$want" "$TMP/found"; then
    echo "FAIL checker: did not report: $want"
    failures=$((failures + 1))
  fi
done
n=$(wc -l <"$TMP/found")
if [ "$n" -ne 8 ]; then
  echo "FAIL checker: $n problems reported in the sample tree, expected 8:"
  sed 's/^/  | /' "$TMP/found"
  failures=$((failures + 1))
else
  echo "ok   the checker finds each kind of mistake"
fi
echo '# Elsewhere' >"$TMP/elsewhere.md"
echo '[out](../../elsewhere.md)' >"$F/docs/out.md"
if ! check_tree "$F" | grep -qF "docs/out.md:1: link to ../../elsewhere.md: outside the repository"; then
  echo "FAIL checker: a link out of the repository was not reported"
  failures=$((failures + 1))
fi

# ------------------------------------------------------- the source tree
check_tree "$SRC" >"$TMP/problems"
if [ -s "$TMP/problems" ]; then
  echo "FAIL the documentation has $(wc -l <"$TMP/problems") problem(s):"
  sed 's/^/  /' "$TMP/problems"
  failures=$((failures + 1))
else
  echo "ok   README.md within $README_MAX lines; every link, anchor and pointer resolves"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
