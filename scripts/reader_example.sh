#!/usr/bin/env bash
# The reader's workflow on the ICLR 2021 atlas, end to end, as in docs/: like 10 papers, write notes, put some on
# a named list, then write the highlights post (docs/example-highlights.md), the For-you recommendations, the
# static site and the screenshots of the reading list, For you and the static site.
#
# Usage: bash scripts/reader_example.sh ATLAS.db [OUT_DIR]     (OUT_DIR defaults to docs)
# ATLAS.db: an atlas built from ../shared/seeds/001_2614e1796f49d7fd.txt; the reading list is written into it.
set -euo pipefail
db=${1:?usage: bash scripts/reader_example.sh ATLAS.db [OUT_DIR]}
out=${2:-docs}
cd "$(dirname "$0")/.."
. .venv/bin/activate
mkdir -p "$out"
liked=(
  "An Image is Worth 16x16 Words"
  "Rethinking Attention with Performers"
  "Learning to live with Dale's principle"
  "Pruning Neural Networks at Initialization: Why Are We Missing the Mark?"
  "Tent: Fully Test-Time Adaptation by Entropy Minimization"
  "Deformable DETR"
  "Score-Based Generative Modeling through Stochastic Differential Equations"
  "How Neural Networks Extrapolate"
  "Sharpness-Aware Minimization"
  "Fourier Neural Operator for Parametric Partial Differential Equations"
)
for t in "${liked[@]}"; do paperatlas list like "$t" --db "$db" >/dev/null; done
paperatlas list note "Sharpness-Aware Minimization" \
  "have to check on this in the paper: does m-sharpness explain the gains?" --db "$db" >/dev/null
paperatlas list note "Pruning Neural Networks at Initialization" \
  "Random shuffling within layers keeps the accuracy of SNIP, GraSP and SynFlow: **the masks' layer-wise density is what matters**." \
  --db "$db" >/dev/null
paperatlas list note "Tent: Fully Test-Time Adaptation" \
  "Simple and strong: entropy minimisation on the test batch, only the normalisation affine parameters change." \
  --db "$db" >/dev/null
paperatlas list add "Tent: Fully Test-Time Adaptation" --list "to discuss" --db "$db" >/dev/null
paperatlas list add "Fourier Neural Operator" --list "to discuss" --db "$db" >/dev/null
paperatlas list mark-read "Deformable DETR" --db "$db" >/dev/null
paperatlas list dislike "Adversarially Guided Actor-Critic" --db "$db" >/dev/null
paperatlas publish --format highlights-md -o "$out/example-highlights.md" --db "$db"
paperatlas recommend --db "$db" -k 10 --exclude-keyphrase "reinforcement learning"
python scripts/screenshots.py "$db" --out "$out" --reader
