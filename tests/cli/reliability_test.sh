#!/usr/bin/env bash
# The CLI under hostile files and inputs: full disks, file-size limits, FIFOs,
# symbolic links, endless and oversized inputs, directories, and the messages
# that echo what the user typed. Every command that could hang is bounded by
# `timeout`, so a regression fails instead of hanging. System devices are only
# ever given as redirections, never as --out paths: a regression that replaces
# its output path by a regular file must not be able to replace /dev/full or
# /dev/null (the tests may run as root); special files given as --out are FIFOs
# made here.
set -u
lc="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_eq() { [ "$1" == "$2" ] || fail "$3: expected '$2', got '$1'"; }
# expect_error NAME STATUS ERRFILE PATTERN...: exit status 2 and every fixed string in the message.
expect_error() {
  local name="$1" status="$2" err="$3"
  shift 3
  expect_eq "$status" "2" "$name: exit status"
  local p
  for p in "$@"; do
    grep -qF -- "$p" "$err" || fail "$name: message lacks '$p': $(head -c 400 "$err")"
  done
}
# The files of a directory, hidden ones included.
listing() { (cd "$1" && ls -A | tr '\n' ' '); }

L='tpu.aligned(npus=4,lmem=1024,addr=2048)'
CASE=(--dtype fp32 --shape 2,3,4,5)  # 480 logical bytes, 4096 physical
head -c 480 /dev/urandom > "$tmp/logical"
"$lc" pack "$L" "${CASE[@]}" --in "$tmp/logical" > "$tmp/physical" || fail "pack to standard output"
expect_eq "$(wc -c < "$tmp/physical" | tr -d ' ')" "4096" "physical size"
conv_in="$tmp/fp32"
printf '\x00\x00\x80\x3f\x00\x00\x00\x40' > "$conv_in"  # 1.0, 2.0
CONV=(convert --rule ieee --from fp32 --to fp16)

# ---- 1. a full disk: every write is checked ---------------------------------------
[ -c /dev/full ] || { echo "FAIL: /dev/full is not a character device"; exit 1; }
"$lc" pack "$L" "${CASE[@]}" --in "$tmp/logical" > /dev/full 2> "$tmp/err"
expect_error "pack > /dev/full" "$?" "$tmp/err" "cannot write standard output" "No space left on device"
"$lc" unpack "$L" "${CASE[@]}" --in "$tmp/physical" > /dev/full 2> "$tmp/err"
expect_error "unpack > /dev/full" "$?" "$tmp/err" "cannot write standard output" "No space left on device"
"$lc" "${CONV[@]}" --in "$conv_in" > /dev/full 2> "$tmp/err"
expect_error "convert > /dev/full" "$?" "$tmp/err" "cannot write standard output" "No space left on device"
# Text output too: a listing or an offset that never arrives is not a success.
"$lc" list > /dev/full 2> "$tmp/err"
expect_error "list > /dev/full" "$?" "$tmp/err" "cannot write standard output" "No space left on device"
"$lc" offset "$L" "${CASE[@]}" --at 0,0,0,0 > /dev/full 2> "$tmp/err"
expect_error "offset > /dev/full" "$?" "$tmp/err" "cannot write standard output" "No space left on device"

# ---- 2. a file system that runs out of space (RLIMIT_FSIZE, 1 KiB) ----------------
# No file is left behind: neither the output nor a temporary file.
limited() { bash -c 'ulimit -f 1 && exec "$@"' limited "$@"; }
mkdir "$tmp/fsize"
limited "$lc" pack "$L" "${CASE[@]}" --in "$tmp/logical" --out "$tmp/fsize/out.bin" 2> "$tmp/err"
expect_error "pack --out over the file-size limit" "$?" "$tmp/err" "cannot write '$tmp/fsize/out.bin'" "File too large"
expect_eq "$(listing "$tmp/fsize")" "" "pack over the file-size limit leaves no file"
head -c 3000 /dev/zero > "$tmp/fp16.big"  # 6000 bytes as fp32
limited "$lc" convert --rule ieee --from fp16 --to fp32 --in "$tmp/fp16.big" --out "$tmp/fsize/c.bin" 2> "$tmp/err"
expect_error "convert --out over the file-size limit" "$?" "$tmp/err" "cannot write '$tmp/fsize/c.bin'" "File too large"
expect_eq "$(listing "$tmp/fsize")" "" "convert over the file-size limit leaves no file"

# ---- 5. a regular file is replaced whole or not at all ----------------------------
mkdir "$tmp/reg"
echo "previous contents" > "$tmp/reg/out.bin"
chmod 640 "$tmp/reg/out.bin"
limited "$lc" pack "$L" "${CASE[@]}" --in "$tmp/logical" --out "$tmp/reg/out.bin" 2> "$tmp/err"
expect_error "pack over an existing file past the limit" "$?" "$tmp/err" "File too large"
expect_eq "$(cat "$tmp/reg/out.bin")" "previous contents" "a failed write keeps the old file"
expect_eq "$(listing "$tmp/reg")" "out.bin " "a failed write leaves no temporary file"
"$lc" pack "$L" "${CASE[@]}" --in "$tmp/logical" --out "$tmp/reg/out.bin" || fail "pack over an existing file"
cmp -s "$tmp/reg/out.bin" "$tmp/physical" || fail "pack over an existing file: contents"
expect_eq "$(stat -c %a "$tmp/reg/out.bin")" "640" "the replaced file keeps its mode"
expect_eq "$(listing "$tmp/reg")" "out.bin " "a write leaves no temporary file"
# An existing file named like the old fixed temporary name is not touched.
echo keep > "$tmp/reg/new.bin.tmp"
"$lc" unpack "$L" "${CASE[@]}" --in "$tmp/physical" --out "$tmp/reg/new.bin" || fail "unpack to a new file"
cmp -s "$tmp/reg/new.bin" "$tmp/logical" || fail "unpack to a new file: contents"
expect_eq "$(cat "$tmp/reg/new.bin.tmp")" "keep" "a file named PATH.tmp is left alone"

# ---- 2. a FIFO is written, not replaced ---------------------------------------------
# through_fifo NAME OUT EXPECTED COMMAND...: COMMAND writes OUT (a FIFO, or a link to one)
# while a reader drains it; the FIFO must remain and the reader get EXPECTED.
through_fifo() {
  local name="$1" out="$2" expected="$3"
  shift 3
  timeout 20 cat "$tmp/fifo" > "$tmp/fifo.out" &
  local reader=$!
  timeout 20 "$@" --out "$out" 2> "$tmp/err"
  expect_eq "$?" "0" "$name: exit status ($(head -c 400 "$tmp/err"))"
  wait "$reader"
  [ -p "$tmp/fifo" ] || { fail "$name replaced the FIFO"; rm -f "$tmp/fifo"; mkfifo "$tmp/fifo"; }
  cmp -s "$tmp/fifo.out" "$expected" || fail "$name: the reader got $(wc -c < "$tmp/fifo.out") bytes"
}
mkfifo "$tmp/fifo"
through_fifo "pack --out FIFO" "$tmp/fifo" "$tmp/physical" "$lc" pack "$L" "${CASE[@]}" --in "$tmp/logical"
through_fifo "unpack --out FIFO" "$tmp/fifo" "$tmp/logical" "$lc" unpack "$L" "${CASE[@]}" --in "$tmp/physical"
printf '\x00\x3c\x00\x40' > "$tmp/fp16"  # 1.0, 2.0 as fp16
through_fifo "convert --out FIFO" "$tmp/fifo" "$tmp/fp16" "$lc" "${CONV[@]}" --in "$conv_in"

# ---- 2. a symbolic link is followed: its target is replaced, the link stays ----------
mkdir "$tmp/link"
echo old > "$tmp/link/target.bin"
ln -s target.bin "$tmp/link/out.bin"
"$lc" pack "$L" "${CASE[@]}" --in "$tmp/logical" --out "$tmp/link/out.bin" 2> "$tmp/err" || fail "pack --out symlink: $(cat "$tmp/err")"
[ -L "$tmp/link/out.bin" ] || fail "pack --out symlink replaced the link"
cmp -s "$tmp/link/target.bin" "$tmp/physical" || fail "pack --out symlink: the target does not hold the output"
expect_eq "$(listing "$tmp/link")" "out.bin target.bin " "pack --out symlink leaves no temporary file"
ln -s missing/nothing.bin "$tmp/link/dangling"
"$lc" pack "$L" "${CASE[@]}" --in "$tmp/logical" --out "$tmp/link/dangling" 2> "$tmp/err"
expect_error "pack --out dangling symlink" "$?" "$tmp/err" "cannot write '$tmp/link/dangling'" "symbolic link" \
  "No such file or directory"
[ -L "$tmp/link/dangling" ] || fail "pack --out dangling symlink replaced the link"
# A special file behind a link is written in place.
ln -s ../fifo "$tmp/link/fifo"
through_fifo "pack --out symlink to a FIFO" "$tmp/link/fifo" "$tmp/physical" "$lc" pack "$L" "${CASE[@]}" --in "$tmp/logical"
[ -L "$tmp/link/fifo" ] || fail "pack --out symlink to a FIFO replaced the link"
"$lc" pack "$L" "${CASE[@]}" --in "$tmp/logical" --out "$tmp" 2> "$tmp/err"
expect_error "pack --out DIR" "$?" "$tmp/err" "cannot write '$tmp'" "Is a directory"

# ---- 3. input is bounded ------------------------------------------------------------
timeout 20 "$lc" pack "$L" "${CASE[@]}" < /dev/zero > /dev/null 2> "$tmp/err"
expect_error "pack < /dev/zero" "$?" "$tmp/err" \
  "input is more than 480 bytes; '$L' --dtype fp32 --shape 2,3,4,5 needs 480 (dense row-major logical)"
timeout 20 "$lc" unpack "$L" "${CASE[@]}" --in /dev/zero > /dev/null 2> "$tmp/err"
expect_error "unpack --in /dev/zero" "$?" "$tmp/err" "input '/dev/zero' is more than 4096 bytes" "needs 4096 (physical)"
cat "$tmp/logical" "$tmp/logical" > "$tmp/double"
"$lc" pack "$L" "${CASE[@]}" --in "$tmp/double" > /dev/null 2> "$tmp/err"
expect_error "pack --in oversized file" "$?" "$tmp/err" "is more than 480 bytes"
head -c 100 "$tmp/logical" | "$lc" pack "$L" "${CASE[@]}" > /dev/null 2> "$tmp/err"
expect_error "pack short input" "$?" "$tmp/err" "input is 100 bytes;" "needs 480"
# convert has no expected size: it reads up to its 256 MiB limit first (a longer bound).
timeout 120 "$lc" "${CONV[@]}" < /dev/zero > /dev/null 2> "$tmp/err"
expect_error "convert < /dev/zero" "$?" "$tmp/err" "input is more than 268435456 bytes; convert reads at most 256 MiB"
"$lc" pack "$L" "${CASE[@]}" --in "$tmp" > /dev/null 2> "$tmp/err"
expect_error "pack --in DIR" "$?" "$tmp/err" "cannot read '$tmp': Is a directory"
"$lc" "${CONV[@]}" --in "$tmp" > /dev/null 2> "$tmp/err"
expect_error "convert --in DIR" "$?" "$tmp/err" "cannot read '$tmp': Is a directory"
"$lc" pack "$L" "${CASE[@]}" --in "$tmp/none" > /dev/null 2> "$tmp/err"
expect_error "pack --in missing file" "$?" "$tmp/err" "cannot read '$tmp/none': No such file or directory"

# ---- 4. messages name the value and the rule ------------------------------------------
"$lc" describe 'FlatMemoryLayout<1000000>' --dtype uint8 --shape 1,1,1,1 2> "$tmp/err"
expect_error "FlatMemoryLayout<1000000>" "$?" "$tmp/err" "rank 1000000" "[1, 64]"
"$lc" describe 'ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0' --dtype uint8 --shape 1,1,1,1 2> "$tmp/err"
expect_error "notation without '>'" "$?" "$tmp/err" "missing '>' closing the '<' at column 20"
"$lc" describe 'FlatMemoryLayout 4' --dtype uint8 --shape 1,1,1,1 2> "$tmp/err"
expect_error "notation without '<'" "$?" "$tmp/err" "missing '<' after FlatMemoryLayout"
# uint16 pixel values are unsigned: 0xffff in the 2-bit A field.
printf '\xff\xff\x00\x00\x00\x00\x00\x00' > "$tmp/pixel"
for impl in optimized reference; do
  "$lc" pack 'nvdla.pixel(format=T_A2B10G10R10)' --dtype uint16 --shape 1,1,4 --impl "$impl" --in "$tmp/pixel" \
    > /dev/null 2> "$tmp/err"
  expect_error "uint16 pixel value ($impl)" "$?" "$tmp/err" "is 65535, which does not fit its 2-bit field"
done
printf '\xff\xff\x00\x00\x00\x00\x00\x00' > "$tmp/pixel"
"$lc" pack 'nvdla.pixel(format=T_A2B10G10R10)' --dtype int16 --shape 1,1,4 --in "$tmp/pixel" > /dev/null 2> "$tmp/err"
expect_error "int16 pixel value" "$?" "$tmp/err" "is -1, which does not fit its 2-bit field"
# A 60,001-dimension shape: the message quotes a bounded part of it.
huge=$(printf '1,%.0s' $(seq 60000))1
"$lc" offset "$L" --dtype fp32 --shape "$huge" --at 0 2> "$tmp/err"
expect_error "60,001-dimension shape" "$?" "$tmp/err" "has rank 60001" "more characters)"
[ "$(wc -c < "$tmp/err")" -lt 1000 ] || fail "60,001-dimension shape: a $(wc -c < "$tmp/err")-byte message"
for layout in 'htp.flat(rank=4)' '(2,3):(1,2)'; do
  for impl in reference optimized; do
    "$lc" describe "$layout" --impl "$impl" --dtype int8 --shape "$huge" 2> "$tmp/err"
    expect_error "60,001-dimension shape of $layout ($impl)" "$?" "$tmp/err" "more characters)"
    [ "$(wc -c < "$tmp/err")" -lt 1000 ] || fail "60,001-dimension shape of $layout ($impl): a $(wc -c < "$tmp/err")-byte message"
  done
done
"$lc" offset "$L" --dtype fp32 --shape 2,3,4,5 --at "$huge" 2> "$tmp/err"
expect_error "60,001-dimension coordinate" "$?" "$tmp/err" "has rank 60001" "more characters)"
[ "$(wc -c < "$tmp/err")" -lt 1000 ] || fail "60,001-dimension coordinate: a $(wc -c < "$tmp/err")-byte message"
long=$(printf 'x%.0s' $(seq 5000))
"$lc" describe "tpu.$long" --dtype fp32 --shape 1,1,1,1 2> "$tmp/err"
expect_error "5000-character layout name" "$?" "$tmp/err" "unknown layout" "more characters)"
[ "$(wc -c < "$tmp/err")" -lt 3000 ] || fail "5000-character layout name: a $(wc -c < "$tmp/err")-byte message"
"$lc" describe "$L" --dtype "$long" --shape 1,1,1,1 2> "$tmp/err"
expect_error "5000-character dtype" "$?" "$tmp/err" "unknown dtype" "more characters)"
[ "$(wc -c < "$tmp/err")" -lt 1000 ] || fail "5000-character dtype: a $(wc -c < "$tmp/err")-byte message"
# An unknown short option is reported as such by every command.
for cmd in list describe offset pack unpack check repro oracle; do
  timeout 20 "$lc" $cmd -x > /dev/null 2> "$tmp/err"
  expect_error "$cmd -x" "$?" "$tmp/err" "unknown option -x for '$cmd'"
done
timeout 20 "$lc" pack "$L" "${CASE[@]}" -x < "$tmp/logical" > /dev/null 2> "$tmp/err"
expect_error "pack LAYOUT -x" "$?" "$tmp/err" "unknown option -x for 'pack'"
"$lc" "${CONV[@]}" -x < "$conv_in" > /dev/null 2> "$tmp/err"
expect_error "convert -x" "$?" "$tmp/err" "unknown option -x for 'convert'"
"$lc" precision nvdla --layer conv -x > /dev/null 2> "$tmp/err"
expect_error "precision -x" "$?" "$tmp/err" "unknown option -x for 'precision'"
"$lc" pack "$L" --shape 2,3,4,5 < "$tmp/logical" > /dev/null 2> "$tmp/err"
expect_error "pack without --dtype" "$?" "$tmp/err" "'pack' needs --dtype D (one of: int8 uint8"
"$lc" offset "$L" --dtype fp32 --at 0,0,0,0 > /dev/null 2> "$tmp/err"
expect_error "offset without --shape" "$?" "$tmp/err" "'offset' needs --shape"
# A stray argument is an error, not ignored.
for cmd in list oracle check; do
  timeout 20 "$lc" $cmd extra > /dev/null 2> "$tmp/err"
  expect_error "$cmd extra" "$?" "$tmp/err" "'$cmd' takes no arguments; unexpected argument 'extra'"
done
"$lc" describe "$L" extra "${CASE[@]}" > /dev/null 2> "$tmp/err"
expect_error "describe LAYOUT extra" "$?" "$tmp/err" "'describe' takes one LAYOUT argument; unexpected argument 'extra'"
"$lc" "${CONV[@]}" extra < "$conv_in" > /dev/null 2> "$tmp/err"
expect_error "convert extra" "$?" "$tmp/err" "unexpected argument 'extra'"
"$lc" list -h | grep -q '^usage:' || fail "list -h prints the usage"

# Text files have a size limit: an endless one is an error, not a hang.
timeout 20 "$lc" replay /dev/zero > /dev/null 2> "$tmp/err"
expect_error "replay /dev/zero" "$?" "$tmp/err" "'/dev/zero' holds more than 1048576 bytes, more than a regression file has"
timeout 20 "$lc" list --coverage --items /dev/zero > /dev/null 2> "$tmp/err"
expect_error "list --coverage --items /dev/zero" "$?" "$tmp/err" "holds more than 16777216 bytes, more than a list of items has"
"$lc" list --coverage --items "$tmp" > /dev/null 2> "$tmp/err"
expect_error "list --coverage --items DIR" "$?" "$tmp/err" "cannot read '$tmp': Is a directory"
# A directory's big file is no regression file; a case not compared says why.
mkdir "$tmp/replay"
head -c 2000000 /dev/zero > "$tmp/replay/big.bin"
printf 'case: mge.nchw | int8 | 4096,4096,512,1\n' > "$tmp/replay/skipped.txt"
printf 'case: mge.nchw | int8 | 65536,65536,65536,65536\n' > "$tmp/replay/both_reject.txt"
timeout 60 "$lc" replay "$tmp/replay" > "$tmp/out" 2> "$tmp/err"
expect_eq "$?" "0" "replay of skipped and rejected cases: exit status"
grep -q "physical size 8589934592 bytes exceeds the check limit" "$tmp/out" || fail "replay: no reason for a skipped case: $(cat "$tmp/out")"
grep -q "element count overflows" "$tmp/out" || fail "replay: no reason for a case both reject: $(cat "$tmp/out")"
# Links in a replayed tree: one in a loop is ignored, a link to a parent is not walked again.
mkdir -p "$tmp/links/sub"
printf 'case: mge.nchw | int8 | 1,2,3,4\n' > "$tmp/links/one.txt"
ln -s "$tmp/links/loop" "$tmp/links/loop"
ln -s "$tmp/links" "$tmp/links/sub/up"
timeout 60 "$lc" replay "$tmp/links" > "$tmp/out" 2> "$tmp/err"
expect_eq "$?" "0" "replay through links: exit status"
grep -q "^replay: 1 passed, 0 failed, 0 declined, 0 skipped (1 other files ignored)" "$tmp/out" ||
  fail "replay through links: $(tail -1 "$tmp/out") $(head -c 300 "$tmp/err")"
# Options: a flag takes no value, bounds agree, a picture needs a name.
"$lc" describe "$L" "${CASE[@]}" --json=false > /dev/null 2> "$tmp/err"
expect_error "--json=false" "$?" "$tmp/err" "option --json takes no value (--json=false)"
"$lc" describe "$L" --shape --dtype fp32 > /dev/null 2> "$tmp/err"
expect_error "--shape without its value" "$?" "$tmp/err" "option --shape needs a value (--dtype is an option)"
"$lc" check --layout 'tpu.c*' --seconds 1 --min-cases 5 --max-cases 1 > /dev/null 2> "$tmp/err"
expect_error "--min-cases over --max-cases" "$?" "$tmp/err" "--min-cases 5 is more than --max-cases 1"
"$lc" repro "$L" "${CASE[@]}" --picture '' > /dev/null 2> "$tmp/err"
expect_error "repro --picture ''" "$?" "$tmp/err" "--picture takes a file name"
"$lc" replay "$tmp/replay" --picture '' > /dev/null 2> "$tmp/err"
expect_error "replay --picture ''" "$?" "$tmp/err" "--picture takes a directory or a file name"
# A bad coordinate or oracle directory is named as what it is.
"$lc" offset "$L" "${CASE[@]}" --at 18446744073709551615,0,0,0 > /dev/null 2> "$tmp/err"
expect_error "--at out of range" "$?" "$tmp/err" "--at: coordinate '18446744073709551615,0,0,0': integer out of range"
"$lc" offset "$L" "${CASE[@]}" --at '' > /dev/null 2> "$tmp/err"
expect_error "--at ''" "$?" "$tmp/err" "--at: empty coordinate"
"$lc" oracle --dir "$tmp/replay/big.bin" > /dev/null 2> "$tmp/err"
expect_error "oracle --dir FILE" "$?" "$tmp/err" "oracle directory $tmp/replay/big.bin is not a directory"
# An SDP layer's data surface must itself be one its document allows.
"$lc" precision nvdla --layer sdp --input int8 --output int8 --data 'nvdla.sdp.element(line_stride=1)@int8@3,3,3,1' \
  > /dev/null 2> "$tmp/err"
expect_error "precision --data with a bad surface" "$?" "$tmp/err" "rule nvdla.sdp/line-stride-align-32"
# A long innermost dimension wraps its physical rows: a bounded picture.
timeout 60 "$lc" show mge.nchw --dtype int8 --shape 1,1,1,20000000 --format text > "$tmp/out" 2> "$tmp/err"
expect_eq "$?" "0" "show of one long row: exit status"
[ "$(wc -c < "$tmp/out")" -lt 1000000 ] || fail "show of one long row: $(wc -c < "$tmp/out") bytes"

[ -c /dev/full ] && [ -c /dev/null ] || fail "a system device was replaced"
echo "reliability: $failures failed"
exit $((failures > 0))
