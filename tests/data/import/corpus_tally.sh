#!/bin/sh
# Runs `ftbound plan --from` on every file of the upstream corpus (MANIFEST.csv) the way
# tests/unit/import_corpus_test.cpp does, and prints per file: tool, outcome (plan / error / CRASH), and the
# error line; then a tally per tool and over the fine-tuning jobs (MANIFEST.csv `job` = finetune). Usage: tests/data/import/corpus_tally.sh [FTBOUND] [> tally.tsv]
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../../build/ftbound}
corpus=$here/corpus
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.rows"' EXIT
tail -n +2 "$corpus/MANIFEST.csv" | while IFS=, read -r tool repo path commit local license job expect args; do
    f=$corpus/$local
    case $tool in
        deepspeed) set -- plan --from "$corpus/harness_training_args.json" --deepspeed "$f" ;;
        accelerate) set -- plan --from "$corpus/harness_training_args.json" --accelerate "$f" ;;
        *) set -- plan --from "$f" ;;
    esac
    # The args column, as the test adds it: options as they are, files relative to corpus/.
    for a in $args; do
        case $a in --*) set -- "$@" "$a" ;; *) set -- "$@" "$corpus/$a" ;; esac
    done
    "$bin" "$@" --json >/dev/null 2>"$tmp"
    rc=$?
    err=$(grep '^error:' "$tmp" | head -1)
    case $rc in
        0) out=plan ;;
        2) out=error ;;
        *) out="CRASH($rc)" ;;
    esac
    printf '%s\t%s\t%s\t%s\t%s\n' "$tool" "$out" "$local" "$(printf '%s' "$err" | sed "s|$corpus/||")" "$job"
done > "$tmp.rows"
cat "$tmp.rows"
awk -F'\t' '{n[$1]++; if ($2=="plan") p[$1]++; N++; if ($2=="plan") P++
              if ($5=="finetune") {F++; if ($2=="plan") FP++}}
    END {for (t in n) printf "tally\t%s\t%d / %d plan\n", t, p[t], n[t]; printf "tally\tall\t%d / %d plan\n", P, N
         printf "tally\tfine-tuning jobs\t%d / %d plan (%.1f %%)\n", FP, F, 100 * FP / F}' "$tmp.rows"
