import { EXIT } from './exit-codes';

/** `otactl --help`: every command, flag, default and exit code. */
export const HELP = `otactl: release firmware builds and follow their rollouts, from CI or a terminal.

Usage: otactl [global flags] <command> [flags]

Global flags (each also from the environment):
  --url URL          the service, e.g. https://ota.example.com          (OTA_URL; required)
  --token TOKEN      a personal token or an api-scope project token      (OTA_TOKEN; required; never printed)
  --project ID       the project; without it, the token's only project   (OTA_PROJECT)
  --json             print results as JSON on stdout (progress stays on stderr)
  --help, -h         this text;  --version: otactl's version

Commands:
  release --binary FILE (--manifest FILE | --version V --chip-family C [manifest flags])
          (--group NAME ... | --channel NAME ... | --all-devices) [plan flags] [--wait [wait flags]]
      Uploads the build (once: the Idempotency-Key comes from its SHA-256 and the manifest, so a
      retried or parallel job creates one artifact), creates the deployment (once per build, plan
      and --run-id), and starts it. With --wait, follows it like \`wait\`. Every flag, group and
      channel is checked before the upload: a release refused for its flags leaves no build behind.
    manifest flags: --framework (default esp_idf), --board-id, --hardware-revision,
      --partition-profile, --min-nvs-schema-version, --security-mode, --release-notes, --signature
    plan flags:
      --group NAME, --channel NAME   targets, each repeatable (any group, and any channel)
      --all-devices                  no targets: every device of the project (must be said)
      --percentage N                 rollout percentage (default 100), or:
      --stages 10,50,100             a staged plan; --stage-wait DURATION between stages (default 0),
                                     --stage-approval to wait for a person's ramp before each next stage
      --failure-threshold PCT:MIN    pause at PCT% failed of at least MIN finished devices
      --reason-limit R:COUNT:WINDOW  pause on COUNT failures with reason R within WINDOW (repeatable)
      --confirm-timeout DURATION     a device silent this long after progress counts as failed
      --health-guardrail             pause when updated devices reset abnormally (panic, watchdog,
                                     brownout) more often than those not yet updated;
                                     --health-margin PCT by more than PCT% (default 50),
                                     --health-significance P at a p-value below P (default 0.001),
                                     --health-min-devices N, --health-min-hours H once each side has
                                     N devices (default 20) and H device-hours (default 50);
                                     each of them implies --health-guardrail
      --max-offers-per-minute N      start at most N new updates a minute (across the fleet)
      --max-in-progress N            keep at most N devices updating at once
      --window DAYS@HH:MM+DURATION   offer only in this weekly window (repeatable), e.g. sat,sun@01:30+3h;
                                     --window-zone ZONE reads it in an IANA zone (default UTC),
                                     --window-device-local-time in each device's reported offset
      --notes TEXT                   the deployment's notes
      --run-id ID                    a new deployment per run (e.g. $GITHUB_RUN_ID); retries of one run share it
      --elf FILE                     the ELF the image was made from: the service decodes the build's
                                     core dumps with it (sent after the upload, before the deployment)
      --sbom FILE                    the build's SBOM (what esp-idf-sbom writes, in any of its formats):
                                     sent after the upload, before the deployment, and read first
      --despite-holds                deploy the build even though a guardrail paused a deployment of it
                                     or an approval gate of one is ahead (approvers only; without it
                                     such a release exits 2 and makes nothing); --despite-guardrail-pause
                                     is its earlier name
      --acknowledge-secure-version-raise
                                     deploy a build whose image raises secure_version: devices that
                                     confirm it burn eFuse bits and never run a lower one again
                                     (without it the API refuses such a release, exit 4)

  wait DEPLOYMENT [--until COND] [--timeout DURATION] [--interval DURATION]
      Follows a deployment, drawing its progress (devices per status, failures by reason) on
      stderr, until COND holds:
        completed        (default) the deployment is completed
        stage:N          it reached stage N of its plan (1 is the first)
        confirmed:N%     N% of the devices it targets confirmed the build
      --timeout (default 1h), --interval between reads (default 5s). Durations: 90s, 15m, 2h.
      A read answered 429, 502, 503 or 504, or not at all (a connection refused or reset), is
      tried again after the interval or its Retry-After; --timeout is a hard limit all the same.

  deployments list | show ID | pause ID | resume ID [PERCENT] | ramp ID PERCENT | complete ID | cancel ID | preview ID
              [--if-version N]: change only version N of it (what show printed); 409 if it moved on
              resume PERCENT: the percentage it resumes at (needed after a guardrail pause)
              [--override-holds]: resume or ramp up a build another deployment holds (approvers)
  artifacts list | upload --binary FILE (manifest flags) | archive ID | unarchive ID
            | prune --keep N [--dry-run]   archive all but the newest N builds, keeping any that a
                                           draft, active or paused deployment uses
  devices list [--group NAME] [--channel NAME] [--search TEXT] [--chip-family C] [--active true|false] [--limit N (default 50)]
          | show ID-or-device_id           the device and its timeline of reports and checks
  groups add NAME | remove NAME [--group NAME] [--channel NAME] [--search TEXT] [--chip-family C] [--active true|false]
      Adds every device that matches the filters to the group, or removes every matching member
      (no filter: every device of the project), as one change in the service, drawing its progress
      on stderr until it ends; audited once.
  projects list

Exit codes:
  ${EXIT.ok}  done; \`wait\`: the condition was met
  ${EXIT.other}  anything else: a usage mistake, the service unreachable, the deployment cancelled
     or completed before the condition
  ${EXIT.paused}  the deployment is paused, by a guardrail or a person (the reason, figures and console link are printed)
  ${EXIT.timedOut}  --timeout passed before the condition
  ${EXIT.refused}  the API refused the command before anything started (its detail is printed)

Examples:
  otactl release --binary build/fw.bin --manifest manifest.json --group canary \\
    --percentage 100 --failure-threshold 20:5 --reason-limit signature_invalid:3:10m --wait --timeout 30m
  otactl deployments ramp 7f0c… 50
  otactl artifacts prune --keep 10
`;
