# Ebb's drain for the Envoy of an llm-d router Pod, run as that container's preStop hook with the image's own bash:
#
#   bash drain-envoy.sh SETTLE DRAIN ADMIN_HOST ADMIN_PORT GAUGE
#
# Envoy exits at once on SIGTERM and cuts every stream it carries, so the hook holds the kubelet's SIGTERM back until
# Envoy carries none. It first fails Envoy's health check through the admin interface (the Pod's loopback): /ready then answers
# 503, so the router Service drops the Pod, and every response Envoy sends from then on closes its connection, so a
# kept-alive client moves to another router Pod after its current request. Envoy serves on undisturbed for SETTLE
# seconds, while the Service's endpoints drop the Pod; then GAUGE (the client listener's requests in flight) is read
# every second and the hook returns at its first 0, or DRAIN seconds after the settle. A gauge that cannot be read
# counts as busy, and arguments that cannot be used hold the Pod until the kubelet ends the hook at the grace. The
# image has no HTTP client, so requests go over bash's /dev/tcp; nothing is written to disk. One line per step goes to
# stderr.

log() { printf 'ebb-router-drain: %s\n' "$*" >&2; }

# One request to the admin interface over bash's /dev/tcp; prints the body, fails on anything but 200. Each line must
# come within 2 s and at most 100 are read: the /stats answer is one line, and a stalled admin interface counts as busy.
admin() {
    local method=$1 path=$2 status line body='' in_body= lines=0 got
    # the braces keep the silenced stderr to this one redirection: on a bare exec it would last for good
    { exec 3<>"/dev/tcp/$ADMIN_HOST/$ADMIN_PORT"; } 2>/dev/null || return 1
    printf '%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n' "$method" "$path" "$ADMIN_HOST" >&3
    IFS= read -r -t 2 status <&3 || { exec 3<&- 3>&-; return 1; }
    while [ $((lines += 1)) -le 100 ]; do
        IFS= read -r -t 2 line <&3
        got=$?
        # past 128 the line timed out: a stalled answer is no answer
        [ "$got" -gt 128 ] && { exec 3<&- 3>&-; return 1; }
        [ "$got" -ne 0 ] && [ -z "$line" ] && break
        line=${line%$'\r'}
        if [ -n "$in_body" ]; then
            body+=$line$'\n'
        elif [ -z "$line" ]; then
            in_body=1
        fi
        [ "$got" -ne 0 ] && break
    done
    exec 3<&- 3>&-
    case ${status%$'\r'} in
        'HTTP/1.1 200'*) printf '%s' "$body" ;;
        *) return 1 ;;
    esac
}

# The gauge's value, or nothing when it cannot be read.
in_flight() {
    local body line
    body=$(admin GET "/stats?filter=$GAUGE") || return 0
    while IFS= read -r line; do
        case $line in
            "$GAUGE: "*) line=${line#"$GAUGE: "}; [[ $line =~ ^[0-9]+$ ]] && printf '%s' "$line"; return 0 ;;
        esac
    done <<< "$body"
}

SETTLE=${1-} DRAIN=${2-} ADMIN_HOST=${3-} ADMIN_PORT=${4-} GAUGE=${5-}
if ! [[ $SETTLE =~ ^[0-9]{1,5}$ && $DRAIN =~ ^[0-9]{1,5}$ && $ADMIN_HOST =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ && $ADMIN_PORT =~ ^[0-9]{1,5}$
      && $GAUGE =~ ^[A-Za-z0-9_.-]{1,200}$ ]]; then
    log "arguments cannot be used; holding the Pod until the kubelet ends this hook at the grace"
    while :; do sleep 3600; done
fi

if admin POST /healthcheck/fail > /dev/null; then
    log "health check failed: /ready answers 503 and every response closes its connection"
else
    log "the admin interface did not take /healthcheck/fail; draining on the gauge alone"
fi
sleep "$SETTLE"
# SECONDS counts whole seconds of the wall clock, so it may turn to 1 a moment after the start: one more keeps the
# wait at least DRAIN long
deadline=$((SECONDS + DRAIN + 1))
while :; do
    active=$(in_flight)
    if [ "$active" = 0 ]; then
        log "no request in flight after $SECONDS s; Envoy may stop"
        exit 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
        log "requests still in flight (${active:-unreadable}) after $SECONDS s, the drain's bound; Envoy stops"
        exit 0
    fi
    log "in flight: ${active:-unreadable}"
    sleep 1
done
