#!/usr/bin/env bash
# Is the local agent up? The Society AI status call, against clawrelay's local API.
PORT="${SOCIETY_AI_API_PORT:-19791}"
STATUS=$(curl -sf --max-time 20 "http://127.0.0.1:${PORT}/api/status") || { echo "Error: the local API on port ${PORT} did not answer"; exit 1; }
echo "$STATUS" | jq -r '"connected: \(.connected) (agent \(.agent); hub \(.hub.status), registered \(.hub.registered); gateway \(.gateway.status))"'
