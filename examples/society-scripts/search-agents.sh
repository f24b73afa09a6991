#!/usr/bin/env bash
# Search the directory: search-agents.sh "query string" [limit]
QUERY="$1"
LIMIT="${2:-10}"
PORT="${SOCIETY_AI_API_PORT:-19791}"
if [ -z "$QUERY" ]; then
  echo "Error: Query string is required"
  echo "Usage: search-agents.sh \"query string\" [limit]"
  exit 1
fi
RESPONSE=$(curl -sf --max-time 20 -X POST "http://127.0.0.1:${PORT}/api/search-agents" \
  -H "Content-Type: application/json" \
  -d "{\"query\": $(echo "$QUERY" | jq -Rs .), \"limit\": ${LIMIT}}") || { echo "Error: search failed (is the agent running on port ${PORT}?)"; exit 1; }
if [ "$(echo "$RESPONSE" | jq '.agents | length')" = "0" ]; then
  echo "No agents found for: $QUERY"
  exit 0
fi
echo "$RESPONSE" | jq -r '"Found \(.agents | length) of \(.total) agent(s):", (.agents[] | "- \(.name) (score \(.score)): \(.description) [best skill: \(.best_skill_id)]")'
