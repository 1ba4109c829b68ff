#!/usr/bin/env bash
# The steps that the GitHub Action (action.yml) and the GitLab CI template (ota-release.gitlab-ci.yml)
# run (docs/ci.md). `build` makes otactl's one-file bundle if this checkout has none; `release`
# runs `otactl release` with the settings below and exits with otactl's own exit code
# (0 done, 2 paused by a guardrail or a person, 3 timed out, 4 refused, 1 anything else).
#
# Settings (environment): OTA_URL, OTA_TOKEN, OTA_PROJECT as otactl reads them, and
#   OTA_BINARY (required), OTA_ELF (the image's ELF, for decoding core dumps), OTA_MANIFEST or OTA_VERSION + OTA_CHIP_FAMILY (+ OTA_FRAMEWORK),
#   OTA_GROUPS, OTA_CHANNELS (comma-separated names), OTA_PERCENTAGE, OTA_STAGES, OTA_STAGE_WAIT,
#   OTA_FAILURE_THRESHOLD, OTA_REASON_LIMITS (comma-separated), OTA_CONFIRM_TIMEOUT, OTA_NOTES,
#   OTA_WINDOWS (semicolon-separated DAYS@HH:MM+DURATION), OTA_WINDOW_ZONE (default UTC),
#   OTA_WINDOW_DEVICE_LOCAL_TIME (true/false, default false), OTA_HEALTH_GUARDRAIL (true/false,
#   default false), OTA_HEALTH_MARGIN (percent, default the service's 50),
#   OTA_RUN_ID, OTA_WAIT (true/false, default true), OTA_UNTIL (default completed),
#   OTA_TIMEOUT (default 1h), OTA_EXTRA_ARGS. With GITHUB_OUTPUT set, the results are written there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="${OTACTL_BUNDLE:-$here/libs/otactl/dist/otactl.cjs}"

build() {
  if [ -f "$bundle" ]; then
    echo "otactl: using $bundle"
    return
  fi
  echo "otactl: building the bundle from $here/libs/otactl"
  (cd "$here/libs/otactl" && npm install --no-audit --no-fund --no-package-lock --omit=optional >/dev/null && npm run --silent generate && npm run --silent bundle)
}

release() {
  : "${OTA_URL:?set OTA_URL}" "${OTA_TOKEN:?set OTA_TOKEN}" "${OTA_BINARY:?set OTA_BINARY}"
  local args=(--json release --binary "$OTA_BINARY")
  if [ -n "${OTA_MANIFEST:-}" ]; then args+=(--manifest "$OTA_MANIFEST"); fi
  if [ -n "${OTA_ELF:-}" ]; then args+=(--elf "$OTA_ELF"); fi
  if [ -n "${OTA_SBOM:-}" ]; then args+=(--sbom "$OTA_SBOM"); fi
  if [ -n "${OTA_VERSION:-}" ]; then args+=(--version "$OTA_VERSION"); fi
  if [ -n "${OTA_CHIP_FAMILY:-}" ]; then args+=(--chip-family "$OTA_CHIP_FAMILY"); fi
  if [ -n "${OTA_FRAMEWORK:-}" ]; then args+=(--framework "$OTA_FRAMEWORK"); fi
  local name
  IFS=',' read -ra names <<<"${OTA_GROUPS:-}"
  for name in "${names[@]}"; do [ -n "$name" ] && args+=(--group "$name"); done
  IFS=',' read -ra names <<<"${OTA_CHANNELS:-}"
  for name in "${names[@]}"; do [ -n "$name" ] && args+=(--channel "$name"); done
  IFS=',' read -ra names <<<"${OTA_REASON_LIMITS:-}"
  for name in "${names[@]}"; do [ -n "$name" ] && args+=(--reason-limit "$name"); done
  if [ -n "${OTA_PERCENTAGE:-}" ]; then args+=(--percentage "$OTA_PERCENTAGE"); fi
  if [ -n "${OTA_STAGES:-}" ]; then args+=(--stages "$OTA_STAGES" --stage-wait "${OTA_STAGE_WAIT:-0}"); fi
  if [ -n "${OTA_FAILURE_THRESHOLD:-}" ]; then args+=(--failure-threshold "$OTA_FAILURE_THRESHOLD"); fi
  if [ -n "${OTA_CONFIRM_TIMEOUT:-}" ]; then args+=(--confirm-timeout "$OTA_CONFIRM_TIMEOUT"); fi
  if [ "${OTA_HEALTH_GUARDRAIL:-false}" = "true" ]; then args+=(--health-guardrail); fi
  if [ -n "${OTA_HEALTH_MARGIN:-}" ]; then args+=(--health-margin "$OTA_HEALTH_MARGIN"); fi
  IFS=';' read -ra names <<<"${OTA_WINDOWS:-}"
  for name in "${names[@]}"; do [ -n "$name" ] && args+=(--window "$name"); done
  if [ -n "${OTA_WINDOWS:-}" ]; then args+=(--window-zone "${OTA_WINDOW_ZONE:-UTC}"); fi
  if [ "${OTA_WINDOW_DEVICE_LOCAL_TIME:-false}" = "true" ]; then args+=(--window-device-local-time); fi
  if [ -n "${OTA_NOTES:-}" ]; then args+=(--notes "$OTA_NOTES"); fi
  if [ -n "${OTA_RUN_ID:-}" ]; then args+=(--run-id "$OTA_RUN_ID"); fi
  if [ "${OTA_WAIT:-true}" = "true" ]; then args+=(--wait --until "${OTA_UNTIL:-completed}" --timeout "${OTA_TIMEOUT:-1h}"); fi
  # shellcheck disable=SC2206 # extra flags are split on spaces on purpose
  if [ -n "${OTA_EXTRA_ARGS:-}" ]; then args+=(${OTA_EXTRA_ARGS}); fi

  local result code=0
  result="$(node "$bundle" "${args[@]}")" || code=$?
  printf '%s\n' "$result"
  if [ -n "${GITHUB_OUTPUT:-}" ] && [ -n "$result" ]; then
    # The JSON answer's figures, as step outputs (a release answers `artifact` and `deployment`;
    # with --wait, `result`, `deployment` and `console_url`).
    printf '%s' "$result" | node -e '
      let text = ""; process.stdin.on("data", (c) => (text += c)).on("end", () => {
        const answer = JSON.parse(text);
        const lines = [
          ["result", answer.result ?? "released"],
          ["deployment-id", answer.deployment?.id ?? ""],
          ["build-number", answer.deployment?.build_number ?? answer.artifact?.build_number ?? ""],
          ["console-url", answer.console_url ?? ""],
        ];
        require("node:fs").appendFileSync(process.env.GITHUB_OUTPUT, lines.map(([k, v]) => `${k}=${v}\n`).join(""));
      });'
  fi
  return "$code"
}

case "${1:-}" in
  build) build ;;
  release) release ;;
  *) echo "usage: $0 build|release" >&2; exit 1 ;;
esac
