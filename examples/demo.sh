#!/usr/bin/env bash
# The main job end to end on a fresh Debian 12 machine, as root: install the
# dependencies, build and install kernel_ml, start a throwaway PostgreSQL 15,
# load scikit-learn's diabetes data set, train, score and print.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/install-deps.sh
make -s
make -s install >/dev/null

data=/usr/lib/python3/dist-packages/sklearn/datasets/data
csv=$(mktemp /tmp/diabetes.XXXXXX.csv)
chmod 644 "$csv"
# features (space-separated) and target, one patient per line
paste -d' ' <(zcat "$data/diabetes_data_raw.csv.gz") <(zcat "$data/diabetes_target.csv.gz") |
	awk '{ printf "%d", NR; for (i = 1; i <= NF; i++) printf ",%s", $i; printf "\n" }' > "$csv"

pg_virtualenv -t sh -c "
psql -X -q -c 'CREATE TABLE diabetes (id int PRIMARY KEY, age float8, sex float8, bmi float8, bp float8,
  s1 float8, s2 float8, s3 float8, s4 float8, s5 float8, s6 float8, progression float8)' &&
psql -X -q -c \"\\copy diabetes FROM '$csv' CSV\" &&
psql -X -f examples/demo.sql"
rm -f "$csv"
