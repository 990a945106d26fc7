#!/bin/sh
# Creates Assay's namespace and registers the search attributes Assay sets on every run, so
# `temporal workflow list --query 'AssayStatus="running"'` works. Safe to run on every start.
set -eu

namespace=${ASSAY_TEMPORAL_NAMESPACE:-default}
retention=${NAMESPACE_RETENTION:-720h}
deadline=$(( $(date +%s) + ${SETUP_TIMEOUT_S:-300} ))

until temporal operator cluster health 2>/dev/null | grep -q SERVING; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "Temporal at $TEMPORAL_ADDRESS did not become healthy" >&2
        exit 1
    fi
    sleep 2
done

if temporal operator namespace describe --namespace "$namespace" >/dev/null 2>&1; then
    echo "namespace $namespace exists"
else
    temporal operator namespace create --namespace "$namespace" --retention "$retention"
fi

# A new namespace reaches the server's namespace cache a few seconds after it is created.
until existing=$(temporal operator search-attribute list --namespace "$namespace" 2>/dev/null); do
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "namespace $namespace did not become visible on $TEMPORAL_ADDRESS" >&2
        exit 1
    fi
    sleep 2
done
for attribute in AssayStatus=Keyword AssayPhase=Keyword AssayKind=Keyword AssayPlan=Keyword AssayAttempts=KeywordList AssayParent=Keyword; do
    name=${attribute%%=*}
    type=${attribute#*=}
    if printf '%s\n' "$existing" | grep -qw "$name"; then
        echo "search attribute $name exists"
    else
        temporal operator search-attribute create --namespace "$namespace" \
            --name "$name" --type "$type"
    fi
done
echo "namespace $namespace is ready for Assay"
