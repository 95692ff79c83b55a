#!/usr/bin/env bash
# A self-signed TLS certificate for trying the deployment (browsers warn about it: it is signed by nobody they
# trust). For real use, put the hospital's certificate and key in the same two files (deploy/README.md).
#   bash deploy/make-self-signed-cert.sh [HOSTNAME] [DIRECTORY]     (defaults: localhost, deploy/certs)
# Writes DIRECTORY/tls.crt and DIRECTORY/tls.key (the key readable by its owner only).
set -euo pipefail
host="${1:-localhost}"
dir="${2:-$(dirname "$0")/certs}"
mkdir -p "$dir"
umask 077
openssl req -x509 -newkey rsa:2048 -sha256 -nodes -days 365 \
  -subj "/CN=${host}" \
  -addext "subjectAltName=DNS:${host},DNS:localhost,IP:127.0.0.1" \
  -keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
chmod 644 "$dir/tls.crt"
echo "wrote $dir/tls.crt and $dir/tls.key (self-signed for ${host}, valid 365 days)"
