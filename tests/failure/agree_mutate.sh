#!/usr/bin/env bash
# tests/failure/agree_mutate.sh BUILD_DIR: mutation check of the agreement's
# tests (the simulator test_agree_sim.c and the unit tests test_agree.c).
# Each mutation below breaks one rule of the protocol in a copy of
# src/failure/agree.c; the tests, built against that copy, must fail.  A mutation it survives is a test that cannot fail:
# this script then fails.  About a minute.
set -u -o pipefail

die() { echo "agree_mutate.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
cd "$(dirname "$0")/../.." || die "no source tree"
BUILD=$1
WORK=$BUILD/tests/failure/mutants
mkdir -p "$WORK" || die "cannot create $WORK"

# name @ text in agree.c @ replacement (\n: a newline)
MUTANTS=$(cat <<'EOF'
decide on PROPOSE (ERA's early return)@    fs_agree_send_down(a, r, FS_AGREE_PROPOSE, a->cfg.me, p, FS_AGREE_NONE, NULL);@    fs_agree_decide(a, r, p, FS_AGREE_NONE);
new coordinator ignores accepted proposals@    if (m->acc_ballot != FS_AGREE_NONE) {@    if (0) {
lowest accepted ballot wins@(src->acc_ballot > dst->acc_ballot)@(src->acc_ballot < dst->acc_ballot)
PROPOSE of another ballot accepted (no promise)@    if ((b != a->coord) || !r->started@    if (!r->started
UP of an older ballot merged (no freshness)@    if (b < a->coord) {@    if (0) {
UP of a higher ballot merged at once@    if (b > a->coord)               /* we are behind@    if (0)               /* we are behind
UP of a higher ballot dropped, not buffered@        return fs_agree_buffer(a, r, &in->st);@        return FS_OK;
no re-send when the coordinator changes@        fs_agree_buf_free(r, a->coord);\n        r->sent = 0;@        fs_agree_buf_free(r, a->coord);
no re-send when only the parent changes@        if (parent != r->parent)\n            r->sent = 0;@        if (0)\n            r->sent = 0;
decided process does not answer an UP@        fs_agree_reply(a, r, from);\n        return FS_OK;@        return FS_OK;
adopted children never see the proposal@        if (r->my_ballot == a->coord)\n            fs_agree_send_down@        if (0)\n            fs_agree_send_down
decided process does not tell new children@        fs_agree_send_down(a, r, FS_AGREE_DECIDE, a->coord, &r->decision, FS_AGREE_NONE,\n                           NULL);@
orphan under an accepted node gets no proposal@    if ((r->my_ballot == b) && !fs_bm_test(r->m.acc, from))@    if (0)
lo merged with MAX@    if (src->lo < dst->lo) {@    if ((src->lo > dst->lo) && (src->lo != UINT32_MAX)) {
F_D from the coordinator's view only@            p->fd[w] = ((~m->c[w] & ~left) | m->fv[w] | a->failed[w]) & in_g;@            p->fd[w] = (a->failed[w] | (0 & left)) & in_g;
F_D without the contributors' views@            p->fd[w] = ((~m->c[w] & ~left) | m->fv[w] | a->failed[w]) & in_g;@            p->fd[w] = ((~m->c[w] & ~left) | a->failed[w]) & in_g;
unacked from the coordinator's own acknowledgements@            hit |= p->fd[w] & m->nak[w];@            hit |= p->fd[w] & r->own_nak[w];
SUM as a merge@    case FS_AGREE_OR:  return x | y;@    case FS_AGREE_OR:  return x + y;
messages of fenced senders accepted@    if (fs_bm_test(a->failed, in.h.from) || @    if (
EOF
)

# what does not change between mutants is compiled once
CCM="${CC:-gcc} -O1 -g -std=gnu11 -w -Isrc -Itests"
for f in tests/failure/test_agree_sim.c tests/failure/test_agree.c src/failure/agree_wire.c; do
    $CCM -c -o "$WORK/$(basename "$f" .c).o" "$f" < /dev/null || die "cannot compile $f"
done

survived=0 n=0
while IFS='@' read -r name from to; do
    [ -n "$name" ] || continue
    n=$((n + 1))
    src=$WORK/agree_$n.c bin=$WORK/sim_$n
    if ! FROM="$from" TO="$to" python3 - src/failure/agree.c "$src" <<'PY'
import os, sys
unq = lambda s: s.replace('\\n', '\n')
text = open(sys.argv[1]).read()
a, b = unq(os.environ['FROM']), unq(os.environ['TO'])
if text.count(a) != 1:
    sys.exit('mutation text found %d times' % text.count(a))
open(sys.argv[2], 'w').write(text.replace(a, b))
PY
    then
        echo "FAIL mutant $n ($name): its text is no longer in agree.c"
        survived=1
        continue
    fi
    built=1
    $CCM -c -o "$WORK/agree_$n.o" "$src" < /dev/null 2> "$WORK/build_$n.log" || built=0
    for t in test_agree_sim test_agree; do
        [ $built = 1 ] || break
        $CCM -o "$bin.$t" "$WORK/$t.o" "$WORK/agree_$n.o" "$WORK/agree_wire.o" -lcriterion \
            < /dev/null 2>> "$WORK/build_$n.log" || built=0
    done
    if [ $built = 0 ]; then
        echo "FAIL mutant $n ($name): does not build"; cat "$WORK/build_$n.log"
        survived=1
        continue
    fi
    if FS_AGREE_SEEDS=2000 timeout -k 5 60 "$bin.test_agree_sim" --jobs 2 < /dev/null \
            > "$WORK/run_$n.log" 2>&1 &&
       timeout -k 5 60 "$bin.test_agree" --jobs 2 < /dev/null >> "$WORK/run_$n.log" 2>&1; then
        echo "FAIL mutant $n ($name): survived, the tests did not notice"
        survived=1
    else
        what=$(grep -m1 -A2 'Assertion Failed' "$WORK/run_$n.log" | tail -1 | sed 's/^\[----\] *//')
        echo "PASS mutant $n ($name) killed: ${what:-timeout or crash}"
    fi
done <<< "$MUTANTS"
[ $n -gt 0 ] || die "no mutants"
exit $survived
