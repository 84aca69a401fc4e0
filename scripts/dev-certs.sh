#!/usr/bin/env bash
# Development certificates for TLS and mTLS between gateway and host agents.
#
#   scripts/dev-certs.sh OUT_DIR [NAME...]
#
# Writes into OUT_DIR:
#   ca.crt, ca.key            a development CA (reused when OUT_DIR already has one,
#                             so reissuing leaves does not break what trusts the CA)
#   agent.crt, agent.key      host agent server certificate; its names are localhost,
#                             127.0.0.1, ::1 and every NAME (an IP address or a DNS name),
#                             i.e. every address the gateway dials the agent by
#   gateway.crt, gateway.key  gateway client certificate for mTLS
#
# Gateway: AGENT_TLS_CA=ca.crt AGENT_TLS_CLIENT_CERT=gateway.crt AGENT_TLS_CLIENT_KEY=gateway.key
# Agent:   AGENT_TLS_CERT=agent.crt AGENT_TLS_KEY=agent.key AGENT_TLS_CLIENT_CA=ca.crt
#
# For development and tests only: the CA key sits beside the certificates it signs.
set -euo pipefail

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
command -v openssl >/dev/null || {
  echo "dev-certs: openssl is not installed (apt-get install openssl)" >&2
  exit 1
}

out=$1
shift

san="DNS:localhost,IP:127.0.0.1,IP:::1"
for name in "$@"; do
  if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then
    san="$san,IP:$name"
  elif [[ $name =~ ^[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9])?$ ]]; then
    san="$san,DNS:$name"
  else
    echo "dev-certs: \"$name\" is neither an IP address nor a DNS name" >&2
    exit 2
  fi
done

mkdir -p "$out"
cd "$out"
umask 077

DAYS=825 # the longest validity clients accept for a leaf certificate
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
serial() { echo "0x$(openssl rand -hex 16)"; }

if [ ! -s ca.key ] || [ ! -s ca.crt ]; then
  new_key ca.key
  openssl req -new -x509 -key ca.key -out ca.crt -days 3650 -subj "/CN=browser-infra development CA" \
    -set_serial "$(serial)" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash"
  echo "dev-certs: new CA in $out/ca.crt"
else
  echo "dev-certs: reusing the CA in $out/ca.crt"
fi

# issue NAME COMMON_NAME EXTENDED_KEY_USAGE [SUBJECT_ALT_NAME]
issue() {
  local name=$1 cn=$2 eku=$3 san=${4:-}
  new_key "$name.key"
  openssl req -new -key "$name.key" -subj "/CN=$cn" -out "$work/$name.csr"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    echo "subjectKeyIdentifier=hash"
    echo "authorityKeyIdentifier=keyid"
    if [ -n "$san" ]; then echo "subjectAltName=$san"; fi
  } >"$work/$name.ext"
  openssl x509 -req -in "$work/$name.csr" -CA ca.crt -CAkey ca.key -set_serial "$(serial)" \
    -days "$DAYS" -sha256 -extfile "$work/$name.ext" -out "$name.crt" 2>/dev/null
}

issue agent "browser-infra host agent" serverAuth "$san"
issue gateway "browser-infra gateway" clientAuth
# Certificates are public; only the keys stay private to their owner.
chmod 644 ca.crt agent.crt gateway.crt
echo "dev-certs: agent certificate for $san"
echo "dev-certs: wrote ca.crt agent.crt agent.key gateway.crt gateway.key in $out"
