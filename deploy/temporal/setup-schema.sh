#!/bin/sh
# Creates Temporal's two databases on first start and upgrades their schema on every start.
# update-schema applies only versions newer than the recorded one, so re-running is safe.
set -eu

: "${POSTGRES_SEEDS:?set POSTGRES_SEEDS to the PostgreSQL host}"
: "${POSTGRES_USER:?set POSTGRES_USER to the Temporal database role}"
: "${SQL_PASSWORD:?set SQL_PASSWORD to the Temporal database password}"

schema=/etc/temporal/schema/postgresql/v12

sql_tool() {
    temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "${DB_PORT:-5432}" \
        -u "$POSTGRES_USER" "$@"
}

setup() {
    db=$1
    dir=$2
    # `create` fails when the database exists; only a new database gets the base schema.
    if sql_tool --db "$db" create; then
        sql_tool --db "$db" setup-schema -v 0.0
    else
        echo "database $db already exists; upgrading its schema"
    fi
    sql_tool --db "$db" update-schema -d "$schema/$dir/versioned"
}

setup temporal temporal
setup temporal_visibility visibility
echo "Temporal schema is up to date"
