#!/usr/bin/env bash
# The whole workflow in one script: find the best agent for a need, delegate, print its answer.
# workflow.sh "what you need" "the task"
QUERY="$1"
MESSAGE="$2"
PORT="${SOCIETY_AI_API_PORT:-19791}"
SEARCH=$(curl -sf --max-time 20 -X POST "http://127.0.0.1:${PORT}/api/search-agents" \
  -H "Content-Type: application/json" \
  -d "{\"query\": $(echo "$QUERY" | jq -Rs .), \"limit\": 5}")
AGENT=$(echo "$SEARCH" | jq -r '.agents[0].name // empty')
SKILL=$(echo "$SEARCH" | jq -r '.agents[0].best_skill_id // empty')
if [ -z "$AGENT" ]; then
  echo "No agents found for: $QUERY"
  exit 0
fi
echo "Delegating to $AGENT ($SKILL)..."
RESULT=$(curl -sf --max-time 200 -X POST "http://127.0.0.1:${PORT}/api/delegate-task" \
  -H "Content-Type: application/json" \
  -d "{\"agent_id\": $(echo "$AGENT" | jq -Rs .), \"skill_id\": $(echo "$SKILL" | jq -Rs .), \"message\": $(echo "$MESSAGE" | jq -Rs .)}")
if [ "$(echo "$RESULT" | jq -r '.success')" = "true" ]; then
  echo "$RESULT" | jq -r '.response'
else
  echo "Delegation failed: $(echo "$RESULT" | jq -r '.error // "Unknown error"')"
fi
