#!/usr/bin/env bash
# The house rules of docs/ARCHITECTURE.md, checked against the code:
#   rooms    every library file belongs to the room with the longest folder
#            that holds it, in the rooms table of docs/ARCHITECTURE.md (between
#            the "rooms:" marker and the end of that table); a file may include
#            another room's header only when its room's row lists that room,
#            and only that room's door;
#   length   no function of a library folder is over MAX_FN_LINES lines (60),
#            counted from the line its definition starts on to its closing
#            brace in column 0.
# Usage: scripts/check-house.sh [ROOT]   (ROOT: the source tree, default the
# one this script is in). Prints one line per breach and exits 1 when there
# is any; prints a summary and exits 0 when there is none.
set -u

ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
DOC=$ROOT/docs/ARCHITECTURE.md
MAX_FN_LINES=${MAX_FN_LINES:-60}
[ -f "$DOC" ] || { echo "check-house: $DOC: no such file" >&2; exit 2; }

# The rooms table: "| `room/` | `door.h` | `other/` `rooms/` ... |" rows
# after the marker, up to the first line that is not a table row.
rooms=$(awk '
  /<!-- rooms: checked by scripts\/check-house.sh -->/ { on = 1; next }
  on && /^\|/ {
    seen = 1
    if ($0 ~ /^\|[-|: ]*$/ || $0 ~ /^\| *room *\|/) next
    n = split($0, col, "|")
    room = col[2]; door = col[3]; may = col[4]
    gsub(/[` ]/, "", room); gsub(/[` ]/, "", door); gsub(/`/, "", may)
    gsub(/^ +| +$/, "", may); if (may == "nothing") may = ""
    print room "\t" door "\t" may
    next
  }
  on && seen { exit }
' "$DOC")
[ -n "$rooms" ] || { echo "check-house: $DOC: no rooms table after the 'rooms:' marker" >&2; exit 2; }

breaches=0
files=0
# Every .c and .h under a room's folder, with the room it belongs to.
room_files=$(cd "$ROOT" && printf '%s\n' "$rooms" | cut -f1 | while read -r r; do
  find "$r" -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null; done | sort -u)
for f in $room_files; do
  files=$((files + 1))
  # Paths are checked against the rows in awk: the file's room is the longest
  # row that prefixes it, an include's room likewise.
  out=$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$ROOT/$f" | ROOMS="$rooms" awk -v file="$f" '
    function room_of(p,   i, best) {
      best = ""
      for (i = 1; i <= nrooms; i++)
        if (index(p, rname[i]) == 1 && length(rname[i]) > length(best)) best = rname[i]
      return best
    }
    BEGIN {
      nrooms = split(ENVIRON["ROOMS"], line, "\n")
      for (i = 1; i <= nrooms; i++) {
        split(line[i], c, "\t"); rname[i] = c[1]; door[c[1]] = c[2]; may[c[1]] = " " c[3] " "
      }
      mine = room_of(file)
    }
    {
      inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
      lineno = $0; sub(/:.*/, "", lineno)
      if (inc !~ /\//) next                      # beside the file: its own room
      theirs = room_of(inc)
      if (theirs == mine) next
      if (theirs == "") { printf "%s:%s: includes %s, which is in no room\n", file, lineno, inc; next }
      if (index(may[mine], " " theirs " ") == 0)
        printf "%s:%s: includes %s: room %s may not enter %s\n", file, lineno, inc, mine, theirs
      else if (inc != door[theirs])
        printf "%s:%s: includes %s: %s is entered through its door %s\n", file, lineno, inc, theirs, door[theirs]
    }')
  if [ -n "$out" ]; then
    printf '%s\n' "$out"
    breaches=$((breaches + $(printf '%s\n' "$out" | wc -l)))
  fi
done

# Function lengths in the .c files of the rooms.
long=$(cd "$ROOT" && printf '%s\n' "$room_files" | grep '\.c$' | xargs awk -v max="$MAX_FN_LINES" '
  FNR == 1 { infn = 0; pending = 0 }
  !infn && /^[A-Za-z_][A-Za-z0-9_ \t*]*[ \t*][A-Za-z_][A-Za-z0-9_]*\(/ && !/;[ \t]*$/ &&
      !/^(typedef|return|else|if|for|while)[ (]/ {
    start = FNR; name = $0; sub(/\(.*/, "", name); n = split(name, parts, /[ \t*]+/)
    name = parts[n]; pending = 1
  }
  pending && /\{[ \t]*$/ { infn = 1; pending = 0 }
  pending && /;[ \t]*$/ { pending = 0 }
  infn && /^\}/ {
    len = FNR - start + 1; infn = 0
    if (len > max) printf "%s:%d: %s is %d lines (at most %d)\n", FILENAME, start, name, len, max
  }')
if [ -n "$long" ]; then
  printf '%s\n' "$long"
  breaches=$((breaches + $(printf '%s\n' "$long" | wc -l)))
fi

if [ "$breaches" -ne 0 ]; then
  echo "check-house: $breaches breach(es) of docs/ARCHITECTURE.md's rules"
  exit 1
fi
echo "check-house: $files files in $(printf '%s\n' "$rooms" | wc -l) rooms keep their doors; no function over $MAX_FN_LINES lines"
