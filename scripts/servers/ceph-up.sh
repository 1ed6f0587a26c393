#!/usr/bin/env bash
# Starts a single-node Ceph cluster (one mon, one memstore OSD, no mgr) and a RADOS Gateway (S3 API)
# on loopback, then creates an S3 user and a bucket. Needs root (CI runs as root).
#
# usage: ceph-up.sh DIR [RGW_PORT]
#   env: MONPORT (default 16789), CAIRN_S3_BUCKET (default cairn),
#        CAIRN_S3_ACCESS_KEY / CAIRN_S3_SECRET_KEY (defaults: test-only keys below)
# Prints, as the last lines, the environment to use the gateway (CAIRN_S3_URL + AWS_* keys).
# Everything (config, keyring, data, logs, pid files) lives in DIR; stop with ceph-down.sh DIR.
set -euo pipefail
C=${1:?usage: ceph-up.sh DIR [RGW_PORT]}
PORT=${2:-18081}
MONPORT=${MONPORT:-16789}
BUCKET=${CAIRN_S3_BUCKET:-cairn}
AK=${CAIRN_S3_ACCESS_KEY:-CAIRNTESTACCESSKEY}
SK=${CAIRN_S3_SECRET_KEY:-cairn-test-secret-key-not-for-production}

fail() { echo "ceph-up.sh: $*" >&2; for f in "$C"/log/*.log; do [ -f "$f" ] && { echo "--- tail $f" >&2; tail -n 5 "$f" >&2; }; done; exit 1; }
[ "$(id -u)" = 0 ] || { echo "ceph-up.sh: needs root (ceph daemons run with --setuser root)" >&2; exit 1; }
for b in ceph-mon ceph-osd radosgw radosgw-admin ceph ceph-authtool monmaptool curl; do
  command -v "$b" >/dev/null 2>&1 || { echo "ceph-up.sh: '$b' not found; run: bash scripts/servers/install.sh" >&2; exit 1; }
done
# We wipe DIR below, so refuse anything that is not empty and not one of ours.
case "$C" in /|"") echo "ceph-up.sh: refusing DIR '$C'" >&2; exit 1;; esac
if [ -d "$C" ] && [ -n "$(ls -A "$C")" ] && [ ! -f "$C/ceph.conf" ]; then
  echo "ceph-up.sh: $C is not empty and holds no ceph.conf; pass an empty or new directory" >&2; exit 1
fi
if [ -f "$C/run/mon.a.pid" ] && kill -0 "$(cat "$C/run/mon.a.pid")" 2>/dev/null; then
  echo "ceph-up.sh: a cluster is already running in $C; stop it first with ceph-down.sh $C" >&2; exit 1
fi
rm -rf "$C"; mkdir -p "$C"/{run,log,mon,osd/0,rgw}
C=$(cd "$C" && pwd)
FSID=$(cat /proc/sys/kernel/random/uuid)
cat > "$C/ceph.conf" <<CONF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MONPORT
public addr = 127.0.0.1
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail warn = 1
osd crush chooseleaf type = 0
osd pool default pg autoscale mode = off
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
auth allow insecure global id reclaim = false
run dir = $C/run
admin socket = $C/run/\$name.asok
log file = $C/log/\$name.log
pid file = $C/run/\$name.pid
keyring = $C/keyring
client mount timeout = 30
[mon]
mon data = $C/mon/\$id
mon cluster log file = $C/log/cluster.log
[osd]
osd data = $C/osd/\$id
osd objectstore = memstore
memstore device bytes = 1073741824
osd max object name len = 460
osd max object namespace len = 64
[client.rgw]
# tcp_nodelay: without it every small response waits out a delayed ACK (~40 ms per GET).
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw data = $C/rgw
CONF
K=$C/keyring
CEPH=(ceph -c "$C/ceph.conf" --connect-timeout 20)
ceph-authtool --create-keyring "$K" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$K" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *' >/dev/null
ceph-authtool "$K" --gen-key -n osd.0 --cap mon 'allow profile osd' --cap osd 'allow *' --cap mgr 'allow profile osd' >/dev/null
ceph-authtool "$K" --gen-key -n client.rgw --cap mon 'allow rw' --cap osd 'allow rwx' --cap mgr 'allow rw' >/dev/null
# monmaptool --add registers a v2 address, which is why "mon host" above says v2.
monmaptool --create --addv a "[v2:127.0.0.1:$MONPORT]" --fsid "$FSID" "$C/monmap" >/dev/null
ceph-mon -c "$C/ceph.conf" --mkfs -i a --monmap "$C/monmap" --keyring "$K" >"$C/log/mkfs.out" 2>&1 || fail "ceph-mon --mkfs failed"
ceph-mon -c "$C/ceph.conf" -i a --setuser root --setgroup root || fail "ceph-mon did not start (port $MONPORT taken?)"
timeout 30 "${CEPH[@]}" osd create >/dev/null || fail "monitor not answering on 127.0.0.1:$MONPORT"
ceph-osd -c "$C/ceph.conf" -i 0 --mkfs >"$C/log/osd-mkfs.out" 2>&1 || fail "ceph-osd --mkfs failed"
timeout 30 "${CEPH[@]}" osd crush add osd.0 1.0 root=default host=localhost >/dev/null 2>&1 || fail "osd crush add failed"
ceph-osd -c "$C/ceph.conf" -i 0 --setuser root --setgroup root 2>/dev/null || fail "ceph-osd did not start"
up=
for _ in $(seq 1 60); do
  if timeout 5 "${CEPH[@]}" osd stat 2>/dev/null | grep -q "1 up"; then up=1; break; fi
  sleep 0.5
done
[ -n "$up" ] || fail "OSD not up after 30 s"
radosgw -c "$C/ceph.conf" -n client.rgw --setuser root --setgroup root || fail "radosgw did not start"
up=
for _ in $(seq 1 120); do
  if [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/")" = 200 ]; then up=1; break; fi
  sleep 0.5
done
[ -n "$up" ] || fail "radosgw not answering on 127.0.0.1:$PORT after 60 s (port taken?)"
timeout 30 radosgw-admin -c "$C/ceph.conf" user create --uid=cairn-test --display-name=cairn-test \
  --access-key="$AK" --secret="$SK" >/dev/null || fail "radosgw-admin user create failed"
# curl signs with SigV4 but (7.88) leaves out the payload hash header RGW needs; give it the empty body's.
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
code=$(curl -s -m 10 -o "$C/log/create-bucket.out" -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" \
  --user "$AK:$SK" -H "x-amz-content-sha256: $EMPTY_SHA256" "http://127.0.0.1:$PORT/$BUCKET")
[ "$code" = 200 ] || [ "$code" = 409 ] || fail "creating bucket '$BUCKET' returned HTTP $code: $(cat "$C/log/create-bucket.out")"
echo "rgw ready on 127.0.0.1:$PORT (data in memory, logs in $C/log)"
echo "CAIRN_S3_URL='s3://$BUCKET/?endpoint=http://127.0.0.1:$PORT&region=us-east-1&forcePathStyle=1'"
echo "AWS_ACCESS_KEY_ID=$AK"
echo "AWS_SECRET_ACCESS_KEY=$SK"
