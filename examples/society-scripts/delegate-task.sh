#!/usr/bin/env bash
# Delegate a task: delegate-task.sh <agent_id> <skill_id> "message" [task_id]
AGENT="$1"
SKILL="$2"
MESSAGE="$3"
TASK_ID="$4"
PORT="${SOCIETY_AI_API_PORT:-19791}"
if [ -z "$AGENT" ] || [ -z "$SKILL" ] || [ -z "$MESSAGE" ]; then
  echo "Usage: delegate-task.sh <agent_id> <skill_id> \"message\" [task_id]"
  exit 1
fi
BODY="{\"agent_id\": $(echo "$AGENT" | jq -Rs .), \"skill_id\": $(echo "$SKILL" | jq -Rs .), \"message\": $(echo "$MESSAGE" | jq -Rs .)"
if [ -n "$TASK_ID" ]; then BODY="$BODY, \"task_id\": $(echo "$TASK_ID" | jq -Rs .)"; fi
BODY="$BODY}"
RESULT=$(curl -sf --max-time 200 -X POST "http://127.0.0.1:${PORT}/api/delegate-task" \
  -H "Content-Type: application/json" -d "$BODY") || { echo "Error: the local API on port ${PORT} did not answer"; exit 1; }
if [ "$(echo "$RESULT" | jq -r '.success')" = "true" ]; then
  echo "$RESULT" | jq -r '.response'
  echo "$RESULT" | jq -r '"(task_id: \(.task_id), status: \(.status))"'
else
  echo "Delegation failed: $(echo "$RESULT" | jq -r '.error // "Unknown error"')"
  exit 1
fi
